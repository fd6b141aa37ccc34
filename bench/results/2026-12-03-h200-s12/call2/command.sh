#!/usr/bin/env bash
# Session 12 call 2 (after prepare_gemm.sh here): torch.matmul and torch._scaled_mm (per-tensor and block
# scales) at the anchors, then every kernel of .devcarry/g12 verified and timed; the bf16 rows twice.
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpu.txt"
: > "$OUT/shapes.txt"
for s in "4096 4096 4096" "8192 8192 8192" "6144 5120 3072"; do
  printf '%s rc bf16\n%s rc e4m3 block\n' "$s" "$s" >> "$OUT/shapes.txt"
done
timeout 150 python3 bench/peers_gemm.py "$OUT/shapes.txt" 2>&1 | tee "$OUT/gemm_peers.jsonl"
for rep in 1 2; do
  [ $rep = 2 ] && rm -rf $D/g12/e4m3*
  for d in $D/g12/*/; do
    d=${d%/}; dir=$(basename "$d"); shape=${dir#*@}
    r=$(timeout 40 $D/bin/rocke run "$d/manifest.json" --shape "$shape" --verify --device cuda --warmup 20 --iters 100 2>&1)
    printf '%-34s %s %s %s\n' "$dir" "$(grep -o '"bad_count": [0-9]*' <<<"$r" | head -1)" \
      "$(grep -o '"tflops": [0-9.]*' <<<"$r" | head -1)" "$(grep -m1 -iE 'error|refus|fail' <<<"$r")" | tee -a "$OUT/gemm.txt"
  done
done
