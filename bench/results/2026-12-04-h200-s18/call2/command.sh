# session 18 call 2 (NVIDIA H200), prepared here with the split edge-tile change (c2336cb's source) and
# OLD_CLI the build of f94b6ff:
#   OLD_CLI=OLD/build/rocke GEMM_MMA=0 GEMM_DIR=.devcarry/gemm_s18b GEMM_SHAPES=bench/gemm_s18b_shapes.txt \
#     bash bench/gemm_odd_h200.sh prepare
#   .devcarry/peers/gemm_attention_peers.py: the shared peer benchmark (kept out of git)
DEVICE_CALL_TAIL=40 bash bench/device_call.sh \
  "gemm:200:GEMM_DIR=.devcarry/gemm_s18b GEMM_SHAPES=bench/gemm_s18b_shapes.txt bash bench/gemm_odd_h200.sh run" \
  "peers:350:PYTHONUNBUFFERED=1 python3 .devcarry/peers/gemm_attention_peers.py > \$OUT/peers.jsonl 2> \$OUT/peers.err"
