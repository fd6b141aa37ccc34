#!/usr/bin/env bash
# Session 13 call 1, built here: the rows kernels (bench/rows_h200.sh prepare), the unified batches
# (bench/attention_unified_h200.sh prepare), the conv rows of issue 16, the fp8 block-scale GEMM at 8192^3,
# and the two prefill anchors for a Nsight Compute profile, all into .devcarry/.
set -uo pipefail
R=${1:-build/rocke}
rm -rf .devcarry
bench/rows_h200.sh prepare "$R" sm_90a > /tmp/prep_rows.log 2>&1 || echo "rows prepare failed"
bench/attention_unified_h200.sh prepare > /tmp/prep_unified.log 2>&1 || echo "unified prepare failed"
CONV_ROWS='^(r3x3-14|odd3x3|r3x3s2|r3x3-56)' bench/conv_h200.sh prepare "$R" sm_90a > /tmp/prep_conv.log 2>&1 \
  || echo "conv prepare failed"
D=.devcarry/g13; mkdir -p "$D"
for s in 8192,8192,8192 4096,4096,4096; do
  "$R" build gemm --dtype e4m3 --scale block --layout rc --target sm_90a --shape "$s" -o "$D/e4m3b-heur@$s" >/dev/null
  "$R" build gemm --dtype e4m3 --scale block --layout rc --target sm_90a --shape "$s" --path wgmma --schedule ws \
    --tile 128x128x128 -o "$D/e4m3b-ws@$s" >/dev/null
  "$R" build gemm --dtype e4m3 --scale tensor --layout rc --target sm_90a --shape "$s" -o "$D/e4m3t-heur@$s" >/dev/null
done
A=.devcarry/attn_prof; mkdir -p "$A"
"$R" build attention --dtype bf16 --head-dim 128 --mask none --target sm_90a --shape 4,32,32,4096,4096,128 -o "$A/d128" >/dev/null
"$R" build attention --dtype bf16 --head-dim 64 --mask none --target sm_90a --shape 8,16,16,2048,2048,64 -o "$A/d64" >/dev/null
find .devcarry/g13 .devcarry/attn_prof \( -name '*.ll' -o -name '*.ir' \) -delete
du -sh .devcarry
