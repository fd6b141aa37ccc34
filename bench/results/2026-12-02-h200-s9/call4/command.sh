#!/usr/bin/env bash
# session 9 call 4: the Python package after the odd-K fix, unified 2 vs 3 stages on prefill and decode
# (64 rows locked), layernorm / sum / transpose rows after the fill rule and the tile order
export OUT=${OUT:-out}
bash bench/device_call.sh \
  "python:90:bash bench/python_h200.sh run --dir .devcarry/python" \
  "unified:90:UNIFIED_PEERS=0 UNIFIED_PARTS=0 UNIFIED_SHAPES=.devcarry/unified_c4.txt bash bench/attention_unified_h200.sh" \
  "rows2:130:OPS_ROWS='^(layernorm|sum|transpose)' bash bench/rows_h200.sh run"
