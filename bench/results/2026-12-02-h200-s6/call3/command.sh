set -u
export ROCKE_DEVICE=cuda
bench/device_call.sh \
 "decode:75:ROWS='^(b32-ctx8k|b128-ctx2k|mixed-b64|b8-hq64-ctx32k)\$' bench/attention_decode_h200.sh" \
 "attention:110:ATTN_ROWS='^(b4h32s4096d128|b4h32s4096d128-causal|gqa32x8-s8192-causal|b4h32s4096d128-bshd|gqa32x8-s8192-causal-bshd|varlen8-gqa32x8-s4096-causal)\$' bench/attention_h200.sh" \
 "unified:130:UNIFIED_PEERS=0 bench/attention_unified_h200.sh" \
 "conv:150:CONV_ROWS='^(r3x3-14|r1x1-56|r3x3s2-28|dw3x3-28)\$' bench/conv_h200.sh"
