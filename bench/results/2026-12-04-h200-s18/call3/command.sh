# session 18 call 3 (NVIDIA H200), prepared here at c47fb62 plus the one-slice step for tile N 256:
#   GEMM_MMA=0 GEMM_DIR=.devcarry/gemm_s18c GEMM_SHAPES=bench/gemm_s18c_shapes.txt bash bench/gemm_odd_h200.sh prepare
DEVICE_CALL_TAIL=40 bash bench/device_call.sh \
  "gemm:300:GEMM_DIR=.devcarry/gemm_s18c GEMM_SHAPES=bench/gemm_s18c_shapes.txt bash bench/gemm_odd_h200.sh run"
