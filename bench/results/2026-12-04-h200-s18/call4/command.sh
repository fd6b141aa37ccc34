# session 18 call 4 (NVIDIA H200), prepared here at the same source:
#   GEMM_MMA=0 GEMM_DIR=.devcarry/gemm_s18d GEMM_SHAPES=bench/gemm_s18d_shapes.txt bash bench/gemm_odd_h200.sh prepare
DEVICE_CALL_TAIL=40 bash bench/device_call.sh \
  "gemm:300:GEMM_DIR=.devcarry/gemm_s18d GEMM_SHAPES=bench/gemm_s18d_shapes.txt bash bench/gemm_odd_h200.sh run"
