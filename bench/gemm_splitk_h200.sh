#!/usr/bin/env bash
# Split-K on wgmma (path=wgmma --split-k S, sm_90a) at K-heavy shapes (bench/gemm_splitk_shapes.txt)
# against the heuristic's kernel and cuBLAS (torch.matmul) in the same run. Two steps:
#   bench/gemm_splitk_h200.sh prepare   here: into .devcarry/gemm_splitk/ for every shape the heuristic's
#     pick (LAYOUT-DTYPE@M,N,K), wgmma with S = 2, 4, 8 splits on 128x128 tiles (LAYOUT-DTYPE-wsS@...)
#     and on 64x128 tiles (LAYOUT-DTYPE-ws64sS@...)
#   bench/gemm_splitk_h200.sh run       on the GPU machine with .devcarry carried (gemm_odd_h200.sh's run
#     over these kernels): folder, rocke TFLOP/s, cuBLAS TFLOP/s, ratio, verify bad=
set -uo pipefail
D=.devcarry
G=$D/gemm_splitk
SHAPES=bench/gemm_splitk_shapes.txt
case "${1:-}" in
prepare)
  B=${BUILD:-build}
  rm -rf "$G"; mkdir -p "$D/bin" "$G"
  cp "$B/rocke" "$D/bin/"
  grep -v '^#' "$SHAPES" | while read -r M N K layout dtype; do
    [ -n "$M" ] || continue
    at="$layout-$dtype"
    "$B/rocke" build gemm --layout "$layout" --dtype "$dtype" --target sm_90a --shape "$M,$N,$K" \
      -o "$G/$at@$M,$N,$K" > /dev/null || echo "build failed: $at@$M,$N,$K"
    for S in 2 4 8; do
      "$B/rocke" build gemm --layout "$layout" --dtype "$dtype" --target sm_90a --shape "$M,$N,$K" --path wgmma \
        --split-k "$S" --tile 128x128x64 --warps 8x1 -o "$G/$at-ws$S@$M,$N,$K" > /dev/null \
        || echo "build failed: $at-ws$S@$M,$N,$K"
      "$B/rocke" build gemm --layout "$layout" --dtype "$dtype" --target sm_90a --shape "$M,$N,$K" --path wgmma \
        --split-k "$S" --tile 64x128x64 --warps 4x1 -o "$G/$at-ws64s$S@$M,$N,$K" > /dev/null \
        || echo "build failed: $at-ws64s$S@$M,$N,$K"
    done
  done
  find "$G" \( -name '*.ll' -o -name '*.ir' -o -name '*.ptx' \) -delete
  du -sh "$G"
  ;;
run) GEMM_DIR=$G GEMM_SHAPES=$SHAPES bash bench/gemm_odd_h200.sh run ;;
*) echo "usage: bench/gemm_splitk_h200.sh prepare|run" >&2; exit 2 ;;
esac
