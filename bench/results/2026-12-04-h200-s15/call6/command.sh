#!/usr/bin/env bash
# Session 15 call 6: the split heuristic's new picks (512 threads, S = ceil(units/M), unroll kept)
# against ce9efd2's (NAME-old@SHAPE) at few long rows, bf16, peers in the same run. Kernels:
# `rocke build F --dtype bf16 --target sm_90a --shape S -o .devcarry/rows/ops/F@S` with each CLI.
set -uo pipefail
S="1,262144 8,1000003 32,262144 64,1000003 100,500001 16,131072 4,150001 128,65537"
DEVICE_CALL_TAIL=60 bench/device_call.sh \
  "rows:300:PEER_SHAPES='$S' PEERS_DTYPES=bf16 bash bench/rows_h200.sh run"
