#!/usr/bin/env bash
# skinny GEMM variants (M 32/64/128) next to torch.matmul
set -uo pipefail
D=.devcarry; OUT=${OUT:-out}; mkdir -p "$OUT"; export ROCKE_DEVICE=cuda
timeout 60 env PYTHONUNBUFFERED=1 python3 bench/peers_gemm.py $D/gemm64/shapes.txt > "$OUT/peers.jsonl" 2> "$OUT/peers.err"
: > "$OUT/rocke.txt"
for m in "$D"/gemm64/*/manifest.json; do
  dir=$(basename "$(dirname "$m")"); shape=${dir#*@}
  echo "== $dir" >> "$OUT/rocke.txt"
  timeout 30 "$D/bin/rocke" run "$m" --shape "$shape" --verify --device cuda --warmup 20 --iters 100 >> "$OUT/rocke.txt" 2>&1 || echo "FAILED($?) $dir" >> "$OUT/rocke.txt"
done
grep -E "^== |bad=|FAILED|^Perf:" "$OUT/rocke.txt" | paste - - - | awk '{print $2, $5, $7, $8, $9}'
cat "$OUT/peers.jsonl"
