#!/usr/bin/env bash
# wgrad tile M probe: t64x64 vs t128x64 vs mma at M = 136, 192, 320; every kernel folder under
# DIR (default .devcarry/x; call 6 ran it over .devcarry/y) with its shape file, verified and timed.
set -uo pipefail
for d in "${1:-.devcarry/x}"/*/; do
  d=${d%/}; b=$(basename "$d"); shape=$(cat "$d/shape")
  r=$(timeout 40 .devcarry/bin/rocke run "$d/manifest.json" --shape "$shape" --stride 1 --pad 1 --groups 1 --verify --device cuda --warmup 20 --iters 100 2>&1)
  printf '%-28s %s %s\n' "$b" "$(grep -o '"tflops": [0-9.]*' <<<"$r" | head -1)" "$(grep -o '"bad_count": [0-9]*' <<<"$r" | head -1)"
done
