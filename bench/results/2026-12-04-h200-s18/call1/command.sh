# session 18 call 1 (NVIDIA H200), prepared here at f94b6ff:
#   GEMM_MMA=0 GEMM_DIR=.devcarry/gemm_s18 GEMM_SHAPES=bench/gemm_s18_shapes.txt bash bench/gemm_odd_h200.sh prepare
#   ROWS_ODD_SHAPES="65536,1001 32768,1999 16384,2047 8192,5001 4096,4097 65536,1537 20000,3001 65536,767" \
#   ROWS_ODD_VARIANTS="d:layernorm:stage=direct c4m8:layernorm:stage=direct,block_size=256,chunks=4,min_blocks_per_sm=8 \
#     c4:layernorm:stage=direct,block_size=256,chunks=4 c2m8:layernorm:stage=direct,block_size=256,chunks=2,min_blocks_per_sm=8 \
#     c4m8:rmsnorm:stage=direct,block_size=256,chunks=4,min_blocks_per_sm=8" bash bench/rows_odd_h200.sh prepare build/rocke -
DEVICE_CALL_TAIL=60 bash bench/device_call.sh \
  "gemm:250:GEMM_DIR=.devcarry/gemm_s18 GEMM_SHAPES=bench/gemm_s18_shapes.txt bash bench/gemm_odd_h200.sh run" \
  "rows:220:ROWS_ODD_SHAPES='65536,1001 32768,1999 16384,2047 8192,5001 4096,4097 65536,1537 20000,3001 65536,767' bash bench/rows_odd_h200.sh run"
