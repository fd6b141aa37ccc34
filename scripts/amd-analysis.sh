#!/usr/bin/env bash
# The AMD code-quality table of every small-op family: registers, LDS,
# spills and occupancy read from the HSACO (rocke analyze), for gfx942 and
# gfx950 at the benchmark shapes. Needs no GPU. Usage:
#   scripts/amd-analysis.sh [BUILD_DIR] > table.md
set -euo pipefail
B=${1:-build}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "| family | target | shape | kernel | VGPR | AGPR | SGPR | LDS B | spills (v/s) | waves/SIMD | WGs/CU | limited by |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for t in gfx942 gfx950; do
  for shape in 32768,4096 4096,32768; do
    while read -r name spec; do
      d="$W/$name-$t-$shape"
      "$B/rocke" build $spec --dtype bf16 --target "$t" --shape "$shape" -o "$d" >/dev/null
      "$B/rocke" analyze "$d"/*.hsaco --target "$t" --json | python3 "$(dirname "$0")/amd_analysis_row.py" "$name" "$t" "$shape"
    done <<'OPS'
add elementwise --op add
sum reduce --op sum
softmax softmax
rmsnorm rmsnorm
layernorm layernorm
layernorm+residual layernorm --residual true
transpose transpose
OPS
  done
done
