#!/usr/bin/env bash
# Session 15 call 4: long rows (vocabulary-size and few huge rows), bf16: softmax, layernorm and
# rmsnorm swept over block_size x chunks x slices with the heuristic's own pick beside them, and the
# peers (copy, torch, Triton) at the same shapes. Kernels built here (e01c149) by the same sweep
# commands with --build-only.
set -uo pipefail
S="1000,151936;64,1000003;1000,262144;1024,50257"
K="--knob block_size=512,1024 --knob chunks=0,4,7,10 --knob slices=1,2,3,4,8,16"
DEVICE_CALL_TAIL=40 bench/device_call.sh \
  "peers:120:PEERS_DTYPES=bf16 python3 bench/peers_small_ops.py 1000,151936 64,1000003 1000,262144 1024,50257 > \$OUT/peers.jsonl 2> \$OUT/peers.err; grep copy \$OUT/peers.jsonl" \
  "sweep:420:export ROCKE_DEVICE=cuda; for f in softmax layernorm rmsnorm; do .devcarry/bin/rocke sweep \$f --target sm_90a --dtype bf16 --shapes '$S' $K --with-heuristic --devices all -q -o .devcarry/sw/\$f 2>&1 | tail -2; cp .devcarry/sw/\$f/results.jsonl \$OUT/\$f.results.jsonl; .devcarry/bin/rocke sweep report .devcarry/sw/\$f > \$OUT/\$f.report.txt 2>&1; done"
