set -u
export ROCKE_DEVICE=cuda
bench/device_call.sh "unified:100:UNIFIED_PEERS=0 UNIFIED_ROWS='^(mixed-p16|decode-p16|few-p16)\$' bench/attention_unified_h200.sh"
