#!/usr/bin/env bash
# Session 15 call 1: the row families at issue 15's grid (per-shape picks and the shape-less
# manifests), bf16, torch / Triton / copy in the same run, then Nsight Compute on the weak shapes.
# Kernels: `bash bench/rows_h200.sh prepare build/rocke sm_90a` at the session's start (ce9efd2).
set -uo pipefail
cd "$(dirname "$0")/../../../.." 2>/dev/null || true
bench/device_call.sh \
  "rows:420:OPS_ROWS='^(softmax|layernorm|rmsnorm|sum)(-any)?@' PEERS_DTYPES=bf16 bash bench/rows_h200.sh run" \
  "ncu:200:for k in 'layernorm 65536,1001' 'softmax 65536,1001' 'softmax 65536,1000' 'layernorm 65536,127'; do set -- \$k; echo \"=== \$1 \$2\"; ncu --set full --launch-skip 2 --launch-count 1 -k regex:rk_ .devcarry/bin/rocke run .devcarry/rows/any/\$1/manifest.json --shape \$2 --device cuda --warmup 2 --iters 1 > \$OUT/ncu-\$1-\$2.txt 2>&1; grep -E 'Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|No Eligible|Executed Ipc A|One or More|L1/TEX Hit|Block Size|Grid Size' \$OUT/ncu-\$1-\$2.txt; done"
