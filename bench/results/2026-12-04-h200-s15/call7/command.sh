#!/usr/bin/env bash
# Session 15 call 7: span against direct rows at short odd lengths (65536 rows of 31..767, bf16),
# softmax, layernorm, rmsnorm, sum; peers in the same run. Kernels (4934d5a):
# `rocke build F --dtype bf16 --stage {span,direct} --shape 65536,N -o .devcarry/rows/ops/F-STAGE@65536,N`.
set -uo pipefail
S="65536,31 65536,63 65536,127 65536,191 65536,255 65536,383 65536,511 65536,767"
DEVICE_CALL_TAIL=70 bench/device_call.sh "rows:300:PEER_SHAPES='$S' PEERS_DTYPES=bf16 bash bench/rows_h200.sh run"
