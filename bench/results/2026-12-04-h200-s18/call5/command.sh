# session 18 call 5 (NVIDIA H200), prepared here at the same source:
#   GEMM_MMA=0 GEMM_DIR=.devcarry/gemm_s18e GEMM_SHAPES=bench/gemm_s18e_shapes.txt bash bench/gemm_odd_h200.sh prepare
DEVICE_CALL_TAIL=40 bash bench/device_call.sh \
  "gemm:300:GEMM_DIR=.devcarry/gemm_s18e GEMM_SHAPES=bench/gemm_s18e_shapes.txt bash bench/gemm_odd_h200.sh run"
