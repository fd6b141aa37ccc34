#!/usr/bin/env bash
# Session 12 call 2, built here: bf16 rc GEMM at issue 12's anchors, the heuristic's kernel beside the
# warp-specialized schedules with cluster=2 (B multicast to pairs, stages released to both blocks), and the
# fp8 block-scale kernels on each schedule and promotion, into .devcarry/g12/NAME@M,N,K.
set -euo pipefail
R=${1:-build/rocke}
D=.devcarry/g12
rm -rf "$D"; mkdir -p "$D" .devcarry/bin
cp "$R" .devcarry/bin/rocke
for s in 4096,4096,4096 8192,8192,8192 6144,5120,3072; do
  while read -r name knobs; do
    "$R" build gemm --dtype bf16 --layout rc --target sm_90a --shape "$s" $knobs -o "$D/$name@$s" >/dev/null \
      || echo "prepare: $name@$s did not build" >&2
  done <<'V'
heur
ws-s3t --path wgmma --schedule ws --tile 128x256x64 --stages 3 --epilogue tma
ws-cl2-s3t --path wgmma --schedule ws --tile 128x256x64 --stages 3 --epilogue tma --cluster 2
ws-cl2-s4d --path wgmma --schedule ws --tile 128x256x64 --stages 4 --epilogue direct --cluster 2
pers-cl2-s3t --path wgmma --schedule persistent --tile 128x256x64 --stages 3 --epilogue tma --cluster 2
pers-cl2-s4d --path wgmma --schedule persistent --tile 128x256x64 --stages 4 --epilogue direct --cluster 2
pp-cl2-s4t --path wgmma --schedule pingpong --tile 64x256x64 --stages 4 --epilogue tma --cluster 2
plain-cl2 --path wgmma --schedule plain --tile 128x256x64 --stages 4 --cluster 2
V
done
for s in 4096,4096,4096 8192,8192,8192; do
  while read -r name knobs; do
    "$R" build gemm --dtype e4m3 --scale block --layout rc --target sm_90a --shape "$s" $knobs -o "$D/$name@$s" >/dev/null \
      || echo "prepare: $name@$s did not build" >&2
  done <<'V'
e4m3b-heur
e4m3b-pers-serial --path wgmma --schedule persistent --tile 128x128x128 --promote serial
e4m3b-ws --path wgmma --schedule ws --tile 128x128x128
e4m3b-pp --path wgmma --schedule pingpong --tile 64x128x128
e4m3b-pp-serial --path wgmma --schedule pingpong --tile 64x128x128 --promote serial
e4m3b-plain --path wgmma --schedule plain --tile 128x128x128
V
done
find "$D" \( -name '*.ll' -o -name '*.ir' -o -name '*.ptx' \) -delete
for m in "$D"/*/manifest.json; do
  printf '%s %s\n' "$(basename "$(dirname "$m")")" "$(grep -o '"kernel_name": "[^"]*"' "$m" | cut -d'"' -f4)"
done
du -sh "$D"
