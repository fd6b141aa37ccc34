#!/usr/bin/env bash
# session 8 call 2: odd-K GEMM after the shifted units (heuristic = gathered mma.sync; and wgmma plain copied)
set -euo pipefail
B=build; T=sm_90a; D=.devcarry
rm -rf "$D"; mkdir -p "$D/bin" "$D/gemm"
cp "$B/rocke" "$D/bin/"
grep -v '^#' bench/gemm_odd_shapes.txt | while read -r M N K layout dtype; do
  "$B/rocke" build gemm --layout $layout --dtype $dtype --target $T --shape $M,$N,$K -o "$D/gemm/$layout-$dtype@$M,$N,$K" >/dev/null
  "$B/rocke" build gemm --layout $layout --dtype $dtype --target $T --shape $M,$N,$K --path wgmma --schedule plain -o "$D/gemm/$layout-$dtype-wgplain@$M,$N,$K" >/dev/null
done
find "$D" -name '*.ll' -delete; find "$D" -name '*.ir' -delete; du -sh "$D"
