# session 17 call 1 (nvidia-h200), from the repo root with .devcarry carried. Prepared here with
#   GEMM_MMA=0 OLD_CLI=<build of 4598835> GEMM_SHAPES=bench/gemm_pad_vec_shapes.txt GEMM_DIR=.devcarry/gemm_pad bash bench/gemm_odd_h200.sh prepare
#   bash bench/rows_odd_h200.sh prepare build/rocke <build of 4598835>
# where build/rocke had the gathered gamma/beta norm path (measured slower, reverted: docs/kernels.md)
DEVICE_CALL_TAIL=40 bash bench/device_call.sh \
  "gemm:150:GEMM_DIR=.devcarry/gemm_pad GEMM_SHAPES=bench/gemm_pad_vec_shapes.txt bash bench/gemm_odd_h200.sh run" \
  "rows:330:ROWS_ODD_ANY='65536,1001 16384,2047 8192,5001 1024,50257' bash bench/rows_odd_h200.sh run"
