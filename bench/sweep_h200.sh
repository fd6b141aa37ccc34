#!/usr/bin/env bash
# Issue 23 on the H200. Two steps, because the GPU machine has no LLVM:
#   bench/sweep_h200.sh prepare [ROCKE] [TARGET]   here (scripts/device-prepare.sh
#       calls it): every sweep below with --build-only, kernels into
#       .devcarry/sweep/*/kernels
#   bench/sweep_h200.sh run                         on the device, from the repo root:
#       the same commands measure them (--devices all), then a summary in $OUT
# (1) the small-op families tuned over a grid of shapes: `rocke tune` keeps the
# heuristic's own pick among the candidates, so per shape the tuned kernel is
# compared with the heuristic's in the same run (never slower; >= 5% faster on
# the median of the shapes where the heuristic is weakest);
# (2) a 200-config sweep's overhead: wall time minus the time inside the
# kernels' launches (the timed runs' sum, the checked launch and warm-ups at
# the median), over wall time (< 15%); `run` prints it for every command and
# overall, with where the rest went (records: inputs_ms, load_ms, stage_ms,
# check_ms, time_ms, job_ms; sweep.json: seconds of setup, build, run).
# Time: each worker fills a shape's inputs and double reference once and
# uploads it; every config is checked on the device against it (a compare
# kernel, 12 bytes back) and a shape's first config on the host as well
# (docs/sweep.md, "Verification cost"). Session 8's run (host checks) took
# 131 s; the host reference per shape (~0.25-3.5 s) is what is left.
# Each family's outputs land in $OUT as soon as it ends.
set -uo pipefail
mode=${1:-}
D=.devcarry/sweep
case "$mode" in
  prepare) ROCKE=${2:-build/rocke}; T=${3:-sm_90a}; extra=(--build-only); mkdir -p "$D"; echo "$T" > "$D/target" ;;
  run) ROCKE=${ROCKE:-.devcarry/bin/rocke}; T=$(cat "$D/target"); extra=(--devices all);
       OUT=${OUT:-out/sweep-h200}; mkdir -p "$OUT"; export ROCKE_DEVICE=cuda
       nvidia-smi --query-gpu=name,driver_version --format=csv 2>&1 | tee "$OUT/gpu.txt" ;;
  *) echo "usage: $0 prepare [ROCKE] [TARGET] | run" >&2; exit 2 ;;
esac

# the grid: rows x row length for the row families, elements for elementwise
ROWS="1024,1024;4096,4096;8192,1024;1024,8192;32768,4096;4096,32768;1024,50257;4096,4097"
ELEMS="1048576;16777216;268435456;1000003"
ROWKNOBS="--knob block_size=128,256,512,1024 --knob vec=4,8 --knob rows_per_block=1,2,4"
# name|family and fixed knobs|swept knobs|shapes
specs=(
  "softmax|softmax --dtype bf16|$ROWKNOBS|$ROWS"
  "layernorm|layernorm --dtype bf16|$ROWKNOBS|$ROWS"
  "rmsnorm|rmsnorm --dtype bf16|$ROWKNOBS|$ROWS"
  "reduce|reduce --dtype bf16 --op sum|$ROWKNOBS|$ROWS"
  "add|elementwise --dtype bf16 --op add|--knob block_size=128,256,512,1024 --knob vec=4,8 --knob unroll=1,2,4|$ELEMS"
)
: > "$D/walls.txt"   # name start end: each command's wall, for the overhead figures
for spec in "${specs[@]}"; do
  IFS='|' read -r name fam swept shapes <<< "$spec"
  echo "== tune $name ($mode)"
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$ROCKE" tune $fam --target "$T" $swept --shapes "$shapes" "${extra[@]}" -q \
    --sweep-dir "$D/$name" -o "$D/$name.tuning.json" 2>&1 | tail -3
  t1=$(date +%s.%N)
  echo "$name $t0 $t1" >> "$D/walls.txt"
  echo "   $name: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
  if [ "$mode" = run ]; then   # what a later timeout would lose
    "$ROCKE" sweep report "$D/$name" > "$OUT/$name.report.txt" 2>&1
    cp "$D/$name.tuning.json" "$OUT/" 2>/dev/null
    cp "$D/$name/results.jsonl" "$OUT/$name.results.jsonl" 2>/dev/null
    cp "$D/$name/report.html" "$OUT/$name.report.html" 2>/dev/null
  fi
done
echo "== 200-config sweep (softmax 4096x4096, looped rows; $mode)"
start=$(date +%s.%N)
"$ROCKE" sweep softmax --target "$T" --dtype bf16 --shapes 4096,4096 --knob chunks=0 \
  --knob block_size=64,128,256,512,1024 --knob vec=1,2,4,8 --knob min_blocks_per_sm=0,1,2,3,4,5,6,7,8,10 \
  --warmup 20 --iters 200 "${extra[@]}" -q -o "$D/overhead" 2>&1 | tail -2
end=$(date +%s.%N)
echo "overhead $start $end" >> "$D/walls.txt"
[ "$mode" = prepare ] && exit 0
cp "$D/overhead/results.jsonl" "$OUT/overhead.results.jsonl" 2>/dev/null
cp "$D/overhead/sweep.json" "$OUT/overhead.sweep.json" 2>/dev/null

python3 - "$D" "$OUT" <<'PY' | tee "$OUT/summary.txt"
import json, os, statistics, sys
d, out = sys.argv[1], sys.argv[2]
walls = {l.split()[0]: (float(l.split()[1]), float(l.split()[2])) for l in open(f"{d}/walls.txt") if l.strip()}

def kernel_s(r):
    # the time inside the item's launches: the sum of its timed runs, and the
    # checked launch and the warm-ups at the median (records before the
    # timing fields: 221 launches at the median, the 200-config sweep's count)
    if "timed_ms" in r:
        return (r["timed_ms"] + r["ms"] * (1 + r["warmup"])) / 1e3
    return r.get("ms", 0) * 221 / 1e3

def overhead(name, sweep_dir):
    """The issue's figure for one command: (wall - time inside launches) / wall, and where the rest went."""
    if name not in walls or not os.path.exists(f"{sweep_dir}/results.jsonl"):
        print(f"{name}: no wall time or records")
        return 0, 0
    wall = walls[name][1] - walls[name][0]
    recs = [json.loads(l) for l in open(f"{sweep_dir}/results.jsonl") if l.strip()]
    ok = [r for r in recs if r.get("status") == "ok"]
    k = sum(kernel_s(r) for r in ok)
    ph = {f: sum(r.get(f, 0) for r in recs) / 1e3 for f in
          ["inputs_ms", "load_ms", "stage_ms", "check_ms", "time_ms", "job_ms"]}
    checks = {c: sum(r.get("check") == c for r in recs) for c in ["device", "both", "host"]}
    secs = {}
    if os.path.exists(f"{sweep_dir}/sweep.json"):
        secs = json.load(open(f"{sweep_dir}/sweep.json")).get("seconds", {})
    print(f"{name}: overhead {100 * (wall - k) / wall:.1f}% (wall {wall:.2f} s, kernels {k:.3f} s, {len(recs)} records; "
          f"issue 23: < 15%)")
    print(f"  {name} wall: setup {secs.get('setup', 0):.2f} s, build phase {secs.get('build', 0):.2f} s, run phase "
          f"{secs.get('run', 0):.2f} s; items {ph['job_ms']:.2f} s = inputs+reference {ph['inputs_ms']:.2f}, "
          f"build+load {ph['load_ms']:.2f}, stage {ph['stage_ms']:.2f}, check {ph['check_ms']:.2f}, "
          f"timing {ph['time_ms']:.2f}; checks: {checks['device']} device, {checks['both']} host+device, "
          f"{checks['host']} host")
    if ph["job_ms"] > 0:
        print(f"  {name} per item: {1e3 * ph['job_ms'] / len(recs):.2f} ms, of which kernels "
              f"{1e3 * k / len(recs):.2f} ms: item overhead {100 * (ph['job_ms'] - k) / ph['job_ms']:.1f}%")
    return wall, k

tw = tk = 0
for name in ["softmax", "layernorm", "rmsnorm", "reduce", "add"]:
    w, k = overhead(name, f"{d}/{name}")
    tw, tk = tw + w, tk + k
for name in ["softmax", "layernorm", "rmsnorm", "reduce", "add"]:
    if not os.path.exists(f"{d}/{name}/results.jsonl"):
        print(f"{name}: no records")
        continue
    recs = [json.loads(l) for l in open(f"{d}/{name}/results.jsonl") if l.strip()]
    ok = [r for r in recs if r.get("status") == "ok"]
    shapes = sorted({r["shape_text"] for r in ok})
    speedups, slower = [], []
    for s in shapes:
        at = [r for r in ok if r["shape_text"] == s]
        heur = [r for r in at if r.get("heuristic")]
        if not heur:
            continue
        best = min(at, key=lambda r: r["ms"])
        sp = heur[0]["ms"] / best["ms"]
        speedups.append((sp, s, heur[0]["of_copy"]))
    # where the heuristic is weakest: the half of the shapes with its lowest fraction of copy
    weak = sorted(speedups, key=lambda x: x[2])[: max(1, len(speedups) // 2)]
    host = sum(r.get("inputs_ms", 0) + r.get("check_ms", 0) for r in recs) / 1e3
    refs = sum(r.get("reference") == "computed" for r in recs)
    print(f"{name}: {len(recs)} records, {refs} references computed, host-side verification {host:.1f} s")
    if not speedups:
        continue
    print(f"{name}: {len(speedups)} shapes; median speedup {statistics.median(x[0] for x in speedups):.3f}; "
          f"on the heuristic's weakest half {statistics.median(x[0] for x in weak):.3f} (issue 23: >= 1.05)")
    for sp, s, frac in speedups:
        print(f"  {s:>16}: tuned/heuristic speedup {sp:.3f} (heuristic at {100 * frac:.1f}% of copy)")
m = json.load(open(f"{d}/overhead/sweep.json"))
print(f"200-config sweep ({m['configs']} configs):")
w, k = overhead("overhead", f"{d}/overhead")
tw, tk = tw + w, tk + k
if tw > 0:
    print(f"overall: overhead {100 * (tw - tk) / tw:.1f}% (wall {tw:.1f} s, kernels {tk:.2f} s, every command above)")
PY
