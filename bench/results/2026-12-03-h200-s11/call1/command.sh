#!/usr/bin/env bash
# Session 11 call 1 (after prepare.sh and `CONV_ROWS='^dw3x3' bench/conv_h200.sh prepare` here):
# torch.matmul at the three bf16 anchors, every GEMM variant of prepare.sh verified and timed, then the
# depthwise conv rows beside cuDNN.
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpu.txt"
printf '4096 4096 4096 rc bf16\n8192 8192 8192 rc bf16\n6144 5120 3072 rc bf16\n' > "$OUT/shapes.txt"
python3 bench/peers_gemm.py "$OUT/shapes.txt" 2>&1 | tee "$OUT/gemm_peers.jsonl"
for m in $D/g11/*/manifest.json; do
  dir=$(basename "$(dirname "$m")"); shape=${dir#*@}
  r=$(timeout 40 $D/bin/rocke run "$m" --shape "$shape" --verify --device cuda --warmup 20 --iters 100 2>&1)
  printf '%-28s %s %s\n' "$dir" "$(grep -o "\"bad_count\": [0-9]*" <<<"$r" | head -1)" \
    "$(grep -o "\"tflops\": [0-9.]*" <<<"$r" | head -1)" | tee -a "$OUT/gemm.txt"
done
CONV_ROWS='^dw3x3' OUT=$OUT/conv timeout 300 bench/conv_h200.sh run > "$OUT/conv.txt" 2>&1
tail -40 "$OUT/conv.txt"
