#!/usr/bin/env bash
# Session 11 call 3, built here: the heuristic's bf16 rc kernel (plain, 4 stages, group 16) beside the
# same with cluster=2 (B multicast to pairs of blocks), at the issue-12 anchors; fp8 e4m3 heuristics
# (per-tensor and per-128-block scales) after the swizzled C staging. Into .devcarry/g11/NAME@M,N,K.
set -euo pipefail
R=${1:-build/rocke}
D=.devcarry/g11
rm -rf "$D"; mkdir -p "$D" .devcarry/bin
cp "$R" .devcarry/bin/rocke
for s in 4096,4096,4096 8192,8192,8192 6144,5120,3072; do
  while read -r name knobs; do
    "$R" build gemm --layout rc --target sm_90a --shape "$s" $knobs -o "$D/$name@$s" >/dev/null \
      || echo "prepare: $name@$s did not build" >&2
  done <<'V'
heur --dtype bf16
cl2 --dtype bf16 --cluster 2
cl2-g8 --dtype bf16 --cluster 2 --group_m 8
cl2-s3 --dtype bf16 --cluster 2 --stages 3
e4m3 --dtype e4m3 --scale tensor --out_dtype bf16
e4m3-block --dtype e4m3 --scale block --out_dtype bf16
V
done
ls "$D" | wc -l
