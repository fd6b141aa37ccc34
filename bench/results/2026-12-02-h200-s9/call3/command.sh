#!/usr/bin/env bash
# session 9 call 3: the sweep with device-side checks (overhead), depthwise dgrad/wgrad direct kernels vs
# cuDNN, the Python package again (odd-K matmul on the padded kernel), softmax/rmsnorm rows after the fill
# rule, unified attention 2 vs 3 stages on the locked 64-row kernel
export OUT=${OUT:-out}
bash bench/device_call.sh \
  "sweep:170:bash bench/sweep_h200.sh run" \
  "conv:120:CONV_ROWS='^(dw3x3-28|dw3x3s2-56)\$' bash bench/conv_h200.sh run" \
  "python:90:bash bench/python_h200.sh run --dir .devcarry/python" \
  "rows1:110:OPS_ROWS='^(softmax|rmsnorm)' bash bench/rows_h200.sh run" \
  "unified:100:UNIFIED_PEERS=0 UNIFIED_PARTS=0 UNIFIED_SHAPES=.devcarry/unified_c3.txt bash bench/attention_unified_h200.sh"
