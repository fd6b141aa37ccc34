#!/usr/bin/env bash
# Session 15 call 2: rows after the realigned gamma/beta views and whole-vector heads/tails
# (14923c1) beside the kernels of ce9efd2 (NAME-old@SHAPE, NAME-old-any), bf16, peers in the same run.
# Kernels: `bash bench/rows_h200.sh prepare build/rocke sm_90a OLD_CLI` (OLD_CLI: ce9efd2's) and
# `rocke build F --dtype bf16 --stage direct --shape S` as F-direct@S for F in softmax layernorm
# rmsnorm, S in 65536,1001 1024,50257 65536,127 16384,2047 4097,4097.
set -uo pipefail
DEVICE_CALL_TAIL=200 bench/device_call.sh \
  "rows:560:OPS_ROWS='^(softmax|layernorm|rmsnorm|sum)(-old)?(-any)?@|^(softmax|layernorm|rmsnorm)-direct@' PEERS_DTYPES=bf16 bash bench/rows_h200.sh run"
