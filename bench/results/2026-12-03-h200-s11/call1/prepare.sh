#!/usr/bin/env bash
# Session 11 call 1, built here: bf16 rc GEMM at the issue-12 anchors, the heuristic's kernel and the
# wgmma schedules/tiles/stages beside it, into .devcarry/g11/NAME@M,N,K.
set -euo pipefail
R=${1:-build/rocke}
D=.devcarry/g11
rm -rf "$D"; mkdir -p "$D" .devcarry/bin
cp "$R" .devcarry/bin/rocke
for s in 4096,4096,4096 8192,8192,8192 6144,5120,3072; do
  while read -r name knobs; do
    "$R" build gemm --dtype bf16 --layout rc --target sm_90a --shape "$s" $knobs -o "$D/$name@$s" >/dev/null \
      || echo "prepare: $name@$s did not build" >&2
  done <<'V'
heur
plain-s4 --path wgmma --schedule plain --tile 128x256x64 --stages 4
g16 --path wgmma --schedule plain --tile 128x256x64 --stages 3 --group_m 16
g4 --path wgmma --schedule plain --tile 128x256x64 --stages 3 --group_m 4
ws-s3 --path wgmma --schedule ws --tile 128x256x64 --stages 3 --epilogue tma
ws-s4d --path wgmma --schedule ws --tile 128x256x64 --stages 4 --epilogue direct
pers-s3 --path wgmma --schedule persistent --tile 128x256x64 --stages 3 --epilogue tma
pers-s4d --path wgmma --schedule persistent --tile 128x256x64 --stages 4 --epilogue direct
pp64x256-s4 --path wgmma --schedule pingpong --tile 64x256x64 --stages 4 --epilogue tma
pp64x256-s5d --path wgmma --schedule pingpong --tile 64x256x64 --stages 5 --epilogue direct
V
done
ls "$D" | wc -l
