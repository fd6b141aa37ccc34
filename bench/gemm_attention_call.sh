#!/usr/bin/env bash
# One device call (under the 10-minute limit): the GEMM kernels measured before and the new ones
# (gathered mma.sync and copied wgmma at the odd K, mma at 4096^3), torch.matmul in the same run, the
# attention prefill next to SDPA, then the unmeasured Hopper schedules last, every rocke run under a
# timeout so a hang costs one kernel, not the call. Run from the repo root with .devcarry carried.
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}
mkdir -p "$OUT"
export ROCKE_DEVICE=cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 | tee "$OUT/gpu.txt"
run_dir() {   # DIR: verify and time one GEMM kernel at the shape in its name
  local m=$1/manifest.json dir shape
  dir=$(basename "$1"); shape=${dir#*@}
  echo "== $dir" >> "$OUT/rocke_gemm.txt"
  timeout "${2:-45}" "$D/bin/rocke" run "$m" --shape "$shape" --verify --device cuda --warmup 20 --iters 100 \
    >> "$OUT/rocke_gemm.txt" 2>&1 || echo "FAILED($?) $dir" >> "$OUT/rocke_gemm.txt"
}
echo "== torch.matmul"
timeout 150 env PYTHONUNBUFFERED=1 python3 bench/peers_gemm.py bench/gemm_shapes.txt > "$OUT/gemm_peers.jsonl" \
  2> "$OUT/gemm_peers.err" || tail -5 "$OUT/gemm_peers.err"
: > "$OUT/rocke_gemm.txt"
for d in "$D"/gemm/*; do
  case $d in *-ws@*|*-persistent@*|*-pingpong@*) continue ;; esac
  run_dir "$d" 45
done
echo "== attention"
OUT=$OUT timeout 200 bash bench/attention_h200.sh || echo "attention bench stopped ($?)"
for d in "$D"/gemm/*-ws@4096* "$D"/gemm/*-persistent@4096* "$D"/gemm/*-pingpong@4096* "$D"/gemm/*-persistent@8192*; do
  run_dir "$d" 30
done
grep -h -B0 'PerfJSON' "$OUT/rocke_gemm.txt" | sed 's/^PerfJSON: //' > "$OUT/rocke_gemm.jsonl"
grep -E "^== |verify|FAILED|Perf:" "$OUT/rocke_gemm.txt"
cat "$OUT/gemm_peers.jsonl"
