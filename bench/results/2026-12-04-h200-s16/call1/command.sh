# session 16, call 1 (kernels from 752f27f: bench/attention_grid_h200.sh prepare; GEMM_DIR=.devcarry/gemm_grid
# GEMM_SHAPES=bench/gemm_grid_shapes.txt bash bench/gemm_odd_h200.sh prepare; bench/gemm_splitk_h200.sh prepare)
DEVICE_CALL_TAIL=45 bash bench/device_call.sh "attn:170:bash bench/attention_grid_h200.sh run" "gemmgrid:190:GEMM_DIR=.devcarry/gemm_grid GEMM_SHAPES=bench/gemm_grid_shapes.txt bash bench/gemm_odd_h200.sh run" "splitk:190:bash bench/gemm_splitk_h200.sh run"
