#!/usr/bin/env bash
# session 8 call 1: GEMM mma.sync after the x4 B loads, Hopper anchors, attention ws bn176, shared peers (torch)
set -euo pipefail
B=build; T=sm_90a; D=.devcarry
rm -rf "$D"; mkdir -p "$D/bin" "$D/gemm" "$D/attention" "$D/peers"
cp "$B/rocke" "$D/bin/"
cp ../shared/peers/gemm_attention_peers.py "$D/peers/"
g() { local tag=$1 shape=$2; shift 2; "$B/rocke" build gemm --layout rc --target "$T" --shape "$shape" "$@" -o "$D/gemm/$tag@$shape" >/dev/null; }
g rc-bf16 4096,4096,4096 --dtype bf16
g rc-bf16-mma-t128x128s4 4096,4096,4096 --dtype bf16 --path mma --tile 128x128x32 --warps 2x2 --stages 4
g rc-bf16-mma-t128x256s4 4096,4096,4096 --dtype bf16 --path mma --tile 128x256x32 --warps 2x4 --stages 4
g rc-bf16 2047,3001,4093 --dtype bf16
g rc-bf16-mma 2047,3001,4093 --dtype bf16 --path mma
for s in 1,8192,8192 16,8192,8192 64,8192,8192; do g rc-bf16-mma $s --dtype bf16 --path mma; done
g rc-e4m3-block-persistent 4096,4096,4096 --dtype e4m3 --scale block --schedule persistent
g rc-e4m3-tensor 4096,4096,4096 --dtype e4m3 --scale tensor
while read -r name nb hq hkv sq skv dh mask knobs; do
  extra=(); for kv in ${knobs//,/ }; do extra+=("--${kv%%=*}" "${kv#*=}"); done
  "$B/rocke" build attention --dtype bf16 --head-dim "$dh" --mask "$mask" --target "$T" \
    --shape "$nb,$hq,$hkv,$sq,$skv,$dh" "${extra[@]}" -o "$D/attention/$name" >/dev/null
done < <(grep -E '^(b4h32s4096d128|b4h32s4096d128-ws-bn176|b4h32s4096d128-ws|b4h32s4096d128-causal|b4h32s4096d128-mma) ' bench/attention_shapes.txt)
find "$D" -name '*.ll' -delete; find "$D" -name '*.ir' -delete
du -sh "$D"
