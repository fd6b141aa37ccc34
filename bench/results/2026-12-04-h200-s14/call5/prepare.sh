#!/usr/bin/env bash
# Session 14 call 5, built here: wgrad (bf16, 3x3 pad 1, sm_90a) at wgmma tile 64x64, 128x64, mma, and
# the heuristic of that build (tile M 128) into .devcarry/x/ (then, on the device: bash run.sh).
# A: N8 C192 56² K192, B: N8 C320 28² K320, C: N16 C320 15² K136, D: N8 C192 14² K192.
set -euo pipefail
mkdir -p .devcarry/x .devcarry/bin && cp build/rocke .devcarry/bin/rocke
cp bench/results/2026-12-04-h200-s14/call5/run.sh .devcarry/x/run.sh
for s in "A 8,192,56,56,192" "B 8,320,28,28,320" "C 16,320,15,15,136" "D 8,192,14,14,192"; do
  set -- $s
  for v in "t64:--path wgmma --tile 64x64x64 --warps 4x1" "t128:--path wgmma --tile 128x64x64 --warps 8x1" \
      "mma:--path mma" "heur:"; do
    # shellcheck disable=SC2086
    build/rocke build conv --direction wgrad ${v#*:} --dtype bf16 --target sm_90a --shape "$2,3,3" --stride 1x1 \
      --pad 1x1x1x1 --groups 1 -o ".devcarry/x/$1-${v%%:*}" > /dev/null
    echo "$2,3,3" > ".devcarry/x/$1-${v%%:*}/shape"
  done
done
