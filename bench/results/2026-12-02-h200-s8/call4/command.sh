#!/usr/bin/env bash
# session 8 call 4: the issue 23 sweep, the Python package on CUDA, span rows, odd-K GEMM (interior tiles)
cd "$(dirname "$0")/.." || exit 1
export OUT=${OUT:-out}
bash bench/device_call.sh \
  "sweep:270:bash bench/sweep_h200.sh run" \
  "python:150:bash bench/python_h200.sh run --dir .devcarry/python" \
  "rows:80:OPS_ROWS=. bash bench/small_ops_focus.sh && timeout 40 python3 bench/peers_small_ops.py 16384,2047 65536,127 4096,4097 > \$OUT/peers.jsonl 2>\$OUT/peers.err; grep -E '^== |^Perf:|bad=|FAILED' \$OUT/rocke_ops.txt | paste - - - | awk '{print \$2, \$3, \$6, \$10}'; grep -v fused \$OUT/peers.jsonl | cut -c1-120" \
  "gemmodd:60:bash bench/.call2.sh"
