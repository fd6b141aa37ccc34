#!/usr/bin/env bash
set -uo pipefail
D=.devcarry; OUT=${OUT:-out}; mkdir -p "$OUT"; export ROCKE_DEVICE=cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 | tee "$OUT/gpu.txt"
timeout 150 env PYTHONUNBUFFERED=1 python3 bench/peers_gemm.py bench/gemm_odd_shapes.txt > "$OUT/peers.jsonl" 2> "$OUT/peers.err" || tail -3 "$OUT/peers.err"
: > "$OUT/rocke.txt"
for m in "$D"/gemm/*/manifest.json; do
  dir=$(basename "$(dirname "$m")"); shape=${dir#*@}
  echo "== $dir" >> "$OUT/rocke.txt"
  timeout 60 "$D/bin/rocke" run "$m" --shape "$shape" --verify --device cuda --warmup 20 --iters 100 >> "$OUT/rocke.txt" 2>&1 || echo "FAILED($?) $dir" >> "$OUT/rocke.txt"
done
grep -E "^== |bad=|FAILED|^Perf:" "$OUT/rocke.txt" | paste - - - | awk '{print $2, $5, $7, $8, $9}'
cat "$OUT/peers.jsonl"
