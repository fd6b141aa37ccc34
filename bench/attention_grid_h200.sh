#!/usr/bin/env bash
# Attention forward away from the anchors (bench/attention_grid_shapes.txt), the heuristic's pick
# against torch SDPA in the same run (ATTN_GRID: another file of rows). Two steps:
#   bench/attention_grid_h200.sh prepare [ROCKE] [TARGET]   here: kernels into .devcarry/<file's name>/NAME
#   bench/attention_grid_h200.sh run                        on the GPU machine (.devcarry carried):
#     bench/attention_h200.sh over that file and folder
set -uo pipefail
SHAPES=${ATTN_GRID:-bench/attention_grid_shapes.txt}   # another grid: its kernels go in its own folder
G=.devcarry/$(basename "$SHAPES" .txt)
case "${1:-}" in
prepare)
  R=${2:-build/rocke} T=${3:-sm_90a}
  rm -rf "$G"; mkdir -p "$G" .devcarry/bin
  cp "$R" .devcarry/bin/rocke
  grep -v '^#' "$SHAPES" | while read -r name nb hq hkv sq skv dh mask knobs; do
    [ -n "$name" ] || continue
    dt=bf16 extra=()   # column 9: dtype=..., layout=..., knobs over the heuristic's pick
    for kv in ${knobs//,/ }; do
      case ${kv%%=*} in dtype) dt=${kv#*=} ;; lengths) ;; *) extra+=("--${kv%%=*}" "${kv#*=}") ;; esac
    done
    "$R" build attention --dtype "$dt" --head-dim "$dh" --mask "$mask" --target "$T" \
      --shape "$nb,$hq,$hkv,$sq,$skv,$dh" "${extra[@]}" -o "$G/$name" > /dev/null || echo "prepare: $name did not build" >&2
  done
  find "$G" \( -name '*.ll' -o -name '*.ir' -o -name '*.ptx' \) -delete
  du -sh "$G"
  ;;
run) ATTN_SHAPES=$SHAPES ATTN_DIR=$G bash bench/attention_h200.sh ;;
*) echo "usage: bench/attention_grid_h200.sh prepare [ROCKE] [TARGET] | run" >&2; exit 2 ;;
esac
