#!/usr/bin/env bash
# A throw-away single-node Slurm cluster in a folder: its own munge key and
# socket, slurm.conf, state folders and ports; `start DIR` prints the
# variables a client needs (SLURM_CONF), `stop DIR` ends it. Exit 77 when
# Slurm or munge is not installed or does not come up. Test support.
set -u
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
skip() { echo "slurm_single_node: $*" >&2; exit 77; }

stop() {
  for f in slurmd slurmctld munged; do
    [ -s "$dir/$f.pid" ] && kill "$(cat "$dir/$f.pid")" 2>/dev/null
  done
  sleep 0.5
  for f in slurmd slurmctld munged; do
    [ -s "$dir/$f.pid" ] && kill -9 "$(cat "$dir/$f.pid")" 2>/dev/null
    rm -f "$dir/$f.pid"
  done
  return 0
}
[ "$cmd" = stop ] && { stop; exit 0; }

for t in munged slurmctld slurmd sbatch squeue; do
  command -v "$t" >/dev/null 2>&1 || [ -x "/usr/sbin/$t" ] || skip "$t is not installed (apt-get install slurm-wlm munge)"
done
PATH=$PATH:/usr/sbin
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
chmod 700 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
munged --socket="$dir/munge/munge.sock" --key-file="$dir/munge/munge.key" --pid-file="$dir/munged.pid" \
       --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" -f 2>"$dir/log/munged.err" \
  || skip "munged did not start: $(cat "$dir/log/munged.err")"
host=$(hostname -s)
# two free ports from the ephemeral range, picked by pid so parallel runs differ
base=$(( 20000 + ($$ % 2000) * 2 ))
cpus=$(nproc)
mem=$(awk '/MemTotal/ {print int($2/1024/2)}' /proc/meminfo)
cat > "$dir/slurm.conf" <<CONF
ClusterName=rocketest
SlurmctldHost=$host
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
SlurmctldPort=$base
SlurmdPort=$((base + 1))
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=rocke Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$dir/slurm.conf" -i 2>"$dir/log/slurmctld.err" || { stop; skip "slurmctld did not start: $(tail -3 "$dir/log/slurmctld.err")"; }
slurmd -f "$dir/slurm.conf" 2>"$dir/log/slurmd.err" || { stop; skip "slurmd did not start: $(tail -3 "$dir/log/slurmd.err")"; }
for _ in $(seq 1 60); do
  state=$(sinfo -h -o %t 2>/dev/null | head -1)
  case "$state" in idle*|mix*|alloc*) echo "SLURM_CONF=$dir/slurm.conf"; exit 0;; esac
  sleep 0.5
done
log=$(tail -5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" 2>/dev/null)
stop
skip "the node did not become idle (state '${state:-none}'): $log"
