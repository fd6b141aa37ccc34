# session 16, call 2 (kernels: the split-K rule's first form, OLD_CLI = ce9efd2's CLI:
#   ATTN_GRID=bench/attention_probe_shapes.txt bash bench/attention_grid_h200.sh prepare
#   GEMM_MMA=0 OLD_CLI=... GEMM_DIR=.devcarry/gemm_var GEMM_SHAPES=bench/gemm_variants_shapes.txt bash bench/gemm_odd_h200.sh prepare
#   bash bench/rows_h200.sh prepare build/rocke sm_90a OLD_CLI)
DEVICE_CALL_TAIL=60 bash bench/device_call.sh "attn:130:ATTN_GRID=bench/attention_probe_shapes.txt bash bench/attention_grid_h200.sh run" "gemmvar:190:GEMM_DIR=.devcarry/gemm_var GEMM_SHAPES=bench/gemm_variants_shapes.txt bash bench/gemm_odd_h200.sh run" "rows:230:OPS_ROWS='^(softmax|layernorm|rmsnorm|sum)(-old)?-any@' ANY_SHAPES='65536,31 65536,127 65536,255 65536,511 65536,767 65536,1001' PEER_SHAPES='65536,31 65536,127 65536,255 65536,511 65536,767 65536,1001' PEERS_DTYPES=bf16 bash bench/rows_h200.sh run"
