#!/usr/bin/env bash
# session 8 call 1 (run on the device from the repo root with .devcarry carried)
set -uo pipefail
D=.devcarry; OUT=${OUT:-out}; mkdir -p "$OUT"; export ROCKE_DEVICE=cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 | tee "$OUT/gpu.txt"
: > "$OUT/rocke.txt"
for m in "$D"/gemm/*/manifest.json; do
  dir=$(basename "$(dirname "$m")"); shape=${dir#*@}
  echo "== $dir" >> "$OUT/rocke.txt"
  timeout 45 "$D/bin/rocke" run "$m" --shape "$shape" --verify --device cuda --warmup 20 --iters 100 >> "$OUT/rocke.txt" 2>&1 || echo "FAILED($?) $dir" >> "$OUT/rocke.txt"
done
for m in "$D"/attention/*/manifest.json; do
  dir=$(basename "$(dirname "$m")")
  echo "== $dir" >> "$OUT/rocke.txt"
  timeout 60 "$D/bin/rocke" run "$m" --shape 4,32,32,4096,4096,128 --verify --device cuda --warmup 10 --iters 50 >> "$OUT/rocke.txt" 2>&1 || echo "FAILED($?) $dir" >> "$OUT/rocke.txt"
done
grep -E "^== |bad|FAILED|^Perf:" "$OUT/rocke.txt"
echo "== shared peers: torch section"
( cd "$D/peers" && timeout 240 env PYTHONUNBUFFERED=1 python3 gemm_attention_peers.py torch ) > "$OUT/peers_torch.jsonl" 2> "$OUT/peers_torch.err"
echo "peers rc=$?"; cat "$OUT/peers_torch.jsonl" | cut -c1-220
