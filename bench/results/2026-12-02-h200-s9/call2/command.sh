#!/usr/bin/env bash
# session 9 call 2: the Python package on CUDA (sm_90a matmul/attention, cooperative odd-K matmul, host overhead,
# the block); odd-K GEMM through the padded cooperative kernel vs the gathered mma.sync and cuBLAS; unified
# attention after the loop split and 3 stages (A/B against b935536's kernels)
export OUT=${OUT:-out}
bash bench/device_call.sh \
  "gemmodd:150:bash bench/gemm_odd_h200.sh run" \
  "python:200:bash bench/python_h200.sh run --dir .devcarry/python" \
  "unified:130:UNIFIED_PEERS=0 UNIFIED_SHAPES=.devcarry/unified_new.txt bash bench/attention_unified_h200.sh" \
  "unifiedold:70:UNIFIED_PEERS=0 UNIFIED_PARTS=0 UNIFIED_DIR=.devcarry/attn_unified_old UNIFIED_SHAPES=.devcarry/unified_old.txt bash bench/attention_unified_h200.sh"
