#!/usr/bin/env bash
# Session 15 call 3: shape-less row manifests (bf16) from three CLIs in one run:
# NAME-old (ce9efd2), NAME-a (realigned gamma/beta with a wnd==0 branch, whole-vector heads/tails),
# NAME-b (the same without the whole-vector heads/tails). Built with `CLI build F --dtype bf16
# --target sm_90a -o .devcarry/rows/any/F-V`.
set -uo pipefail
DEVICE_CALL_TAIL=100 bench/device_call.sh \
  "rows:400:ANY_SHAPES='65536,127 65536,1000 65536,1001 16384,2047 8192,5000 4096,4097 1024,50257' PEER_SHAPES='65536,127 65536,1000 65536,1001 16384,2047 8192,5000 4096,4097 1024,50257' PEERS_DTYPES=bf16 bash bench/rows_h200.sh run"
