# session 16, call 3 (kernels from the tile model's first form (128x128 at 0.90, no co-residency credit);
# OLD_CLI = a build of ce9efd2, whose GEMM picks are 752f27f's):
#   ATTN_GRID=bench/attention_d64_shapes.txt bash bench/attention_grid_h200.sh prepare
#   GEMM_MMA=0 OLD_CLI=... GEMM_DIR=.devcarry/gemm_tiles GEMM_SHAPES=bench/gemm_tiles_shapes.txt bash bench/gemm_odd_h200.sh prepare
DEVICE_CALL_TAIL=70 bash bench/device_call.sh "attn:150:ATTN_GRID=bench/attention_d64_shapes.txt bash bench/attention_grid_h200.sh run" "gemmtiles:300:GEMM_DIR=.devcarry/gemm_tiles GEMM_SHAPES=bench/gemm_tiles_shapes.txt bash bench/gemm_odd_h200.sh run"
