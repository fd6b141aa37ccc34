#!/usr/bin/env bash
# session 8 call 6: call 5's convolutions and call 4's span rows again with the current rocke binary
cd "$(dirname "$0")/.." || exit 1
export OUT=${OUT:-out}
bash bench/device_call.sh "conv:150:CONV_ROWS='^(r1x1-56|dw3x3-28|r3x3-14)\$' bash bench/conv_h200.sh" \
  "rows:60:OPS_ROWS=. bash bench/small_ops_focus.sh; grep -E '^== |^Perf:|bad=|FAILED' \$OUT/rocke_ops.txt | head -80"
