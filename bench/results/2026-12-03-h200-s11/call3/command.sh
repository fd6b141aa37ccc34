#!/usr/bin/env bash
# Session 11 call 3 (after prepare.sh here): torch.matmul and torch._scaled_mm at the three anchors,
# then every kernel of .devcarry/g11 verified and timed, two rounds.
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpu.txt"
: > "$OUT/shapes.txt"
for s in "4096 4096 4096" "8192 8192 8192" "6144 5120 3072"; do
  printf '%s rc bf16\n%s rc e4m3 tensor\n%s rc e4m3 block\n' "$s" "$s" "$s" >> "$OUT/shapes.txt"
done
python3 bench/peers_gemm.py "$OUT/shapes.txt" 2>&1 | tee "$OUT/gemm_peers.jsonl"
for rep in 1 2; do  # a second round of the bf16 rows only
  [ $rep = 2 ] && rm -rf $D/g11/e4m3*
  for d in $D/g11/*/; do
    d=${d%/}; dir=$(basename "$d"); shape=${dir#*@}
    r=$(timeout 40 $D/bin/rocke run "$d/manifest.json" --shape "$shape" --verify --device cuda --warmup 20 --iters 100 2>&1)
    printf '%-28s %s %s %s\n' "$dir" "$(grep -o '"bad_count": [0-9]*' <<<"$r" | head -1)" \
      "$(grep -o '"tflops": [0-9.]*' <<<"$r" | head -1)" "$(grep -m1 -iE 'error|refus' <<<"$r")" | tee -a "$OUT/gemm.txt"
  done
done
