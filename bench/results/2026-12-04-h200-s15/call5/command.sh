#!/usr/bin/env bash
# Session 15 call 5: few long rows (the split path), bf16: layernorm, softmax and rmsnorm looped
# (chunks=0) over block_size x slices with the heuristic's pick beside them; copy peers at the shapes.
# Kernels built here (e01c149) by the same sweep commands with --build-only.
set -uo pipefail
S="1,262144;8,1000003;32,262144;64,1000003;100,500001;16,131072"
K="--knob block_size=256,512,1024 --knob chunks=0 --knob slices=2,4,5,8,12,16"
DEVICE_CALL_TAIL=10 bench/device_call.sh \
  "peers:100:PEERS_DTYPES=bf16 python3 bench/peers_small_ops.py 1,262144 8,1000003 32,262144 64,1000003 100,500001 16,131072 > \$OUT/peers.jsonl 2> \$OUT/peers.err; grep copy \$OUT/peers.jsonl" \
  "sweep:300:export ROCKE_DEVICE=cuda; for f in layernorm softmax rmsnorm; do .devcarry/bin/rocke sweep \$f --target sm_90a --dtype bf16 --shapes '$S' $K --with-heuristic --devices all -q -o .devcarry/sw/\$f 2>&1 | tail -1; cp .devcarry/sw/\$f/results.jsonl \$OUT/\$f.results.jsonl; done"
