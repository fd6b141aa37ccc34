#!/usr/bin/env bash
# session 9 call 4: the Python package after the odd-K fix; unified 2 vs 3 stages on one 8192-token prefill
export OUT=${OUT:-out}
bash bench/device_call.sh \
  "python:80:bash bench/python_h200.sh run --dir .devcarry/python" \
  "unified:60:UNIFIED_PEERS=0 UNIFIED_PARTS=0 UNIFIED_SHAPES=.devcarry/unified_c4b.txt bash bench/attention_unified_h200.sh"
