#!/usr/bin/env bash
# GEMM on the device machine (run from the repo root after
# `scripts/device-prepare.sh build sm_90a` here, which builds the kernels of
# bench/gemm_shapes.txt into .devcarry/gemm/): torch.matmul in the same run,
# then every rocke kernel verified and timed. Logs go to $OUT (or ./out).
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}
mkdir -p "$OUT"
export ROCKE_DEVICE=cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 | tee "$OUT/gpu.txt"
echo "== torch.matmul"
PYTHONUNBUFFERED=1 python3 bench/peers_gemm.py bench/gemm_shapes.txt > "$OUT/gemm_peers.jsonl" 2> "$OUT/gemm_peers.err" \
  || tail -5 "$OUT/gemm_peers.err"
echo "== rocke gemm"
: > "$OUT/rocke_gemm.txt"
for m in "$D"/gemm/*/manifest.json; do
  dir=$(basename "$(dirname "$m")")
  shape=${dir#*@}
  echo "== $dir" >> "$OUT/rocke_gemm.txt"
  "$D/bin/rocke" run "$m" --shape "$shape" --verify --device cuda --warmup 20 --iters 100 \
    >> "$OUT/rocke_gemm.txt" 2>&1 || echo "FAILED $dir" >> "$OUT/rocke_gemm.txt"
done
grep -h 'PerfJSON' "$OUT/rocke_gemm.txt" | sed 's/^PerfJSON: //' > "$OUT/rocke_gemm.jsonl"
cat "$OUT/gemm_peers.jsonl" "$OUT/rocke_gemm.jsonl"
