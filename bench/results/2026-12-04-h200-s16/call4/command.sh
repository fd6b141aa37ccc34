# session 16, call 4 (kernels from 8e5e1c4's CLI plus the 1.5x span brackets of row_variants.c; OLD_CLI for GEMM
# = a build of ce9efd2, OLD_ROCKE for rows = a build of 8e5e1c4):
#   GEMM_MMA=0 OLD_CLI=... GEMM_DIR=.devcarry/gemm_check GEMM_SHAPES=bench/gemm_check_shapes.txt bash bench/gemm_odd_h200.sh prepare
#   bash bench/rows_h200.sh prepare build/rocke sm_90a OLD_ROCKE
DEVICE_CALL_TAIL=45 bash bench/device_call.sh "gemmcheck:150:GEMM_DIR=.devcarry/gemm_check GEMM_SHAPES=bench/gemm_check_shapes.txt bash bench/gemm_odd_h200.sh run" "rows:200:OPS_ROWS='^(softmax|layernorm|rmsnorm)(-old)?-any@' ANY_SHAPES='65536,97 65536,383 65536,601 65536,767 65536,1001' PEER_SHAPES='65536,97 65536,383 65536,601 65536,767 65536,1001' PEERS_DTYPES=bf16 bash bench/rows_h200.sh run"
