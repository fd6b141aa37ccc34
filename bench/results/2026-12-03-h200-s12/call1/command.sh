#!/usr/bin/env bash
# Session 12 call 1 (after, here: CONV_ROWS='^(r3x3-14|odd3x3|r3x3s2|r3x3-56)' bench/conv_h200.sh prepare
# build/rocke sm_90a; bench/gemm_odd_h200.sh prepare; bench/rows_h200.sh prepare build/rocke sm_90a):
# the 3x3 pixel-box forward beside cuDNN, GEMM at odd leading dimensions beside cuBLAS, the rows
# layernorm/sum and fused rows beside torch/Triton, and the RMSNorm auto kernel that failed at
# 65536x1001 under compute-sanitizer.
CONV='CONV_ROWS="^(r3x3-14|odd3x3|r3x3s2|r3x3-56)" bench/conv_h200.sh run'
ROWS='OPS_ROWS="^(layernorm|sum)(-direct)?-any@65536,(127|255|1000|1001)$|^(layernorm|sum)@65536,(127|1000)$|^(add_rmsnorm_quant|topk_softmax)|^rmsnorm-auto-any@65536,1001$" PEER_SHAPES="65536,127 65536,255 65536,1000 65536,1001 32768,4096 4096,8192 4096,5120" PEERS_DTYPES=bf16 RUN_TIMEOUT=25 bash bench/rows_h200.sh run'
SAN='timeout 60 compute-sanitizer --tool memcheck --print-limit 5 .devcarry/bin/rocke run .devcarry/rows/any/rmsnorm-auto/manifest.json --shape 65536,1001 --device cuda --warmup 0 --iters 1 2>&1 | tail -30'
DEVICE_CALL_TAIL=45 bench/device_call.sh "conv:270:$CONV" "gemm_odd:100:bench/gemm_odd_h200.sh run" "rows:150:$ROWS" "san:60:$SAN"
