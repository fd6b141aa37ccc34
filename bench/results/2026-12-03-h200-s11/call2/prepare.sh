#!/usr/bin/env bash
# Session 11 call 2, built here: bf16 rc GEMM at the issue-12 anchors after the swizzled C staging
# (d9dd72c): the heuristic (plain, 4 stages, C in the B stages), plain 3 stages, ws and persistent with
# the swizzled staging, into .devcarry/g11/NAME@M,N,K; call 1's kernels stay in .devcarry/g11old.
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
s3 --path wgmma --schedule plain --tile 128x256x64 --stages 3 --epilogue tma
g16 --path wgmma --schedule plain --tile 128x256x64 --stages 4 --epilogue tma --group_m 16
ws-s3 --path wgmma --schedule ws --tile 128x256x64 --stages 3 --epilogue tma
pers-s3 --path wgmma --schedule persistent --tile 128x256x64 --stages 3 --epilogue tma
V
done
ls "$D" | wc -l
