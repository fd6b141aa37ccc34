#!/usr/bin/env bash
# Session 14 call 6: cuDNN wgrad at call 5's probe shapes (shapes.txt) and the heuristic's wgrad of
# b3d7df7 there (built here as call5/prepare.sh's "heur" kernels, into .devcarry/y/).
set -uo pipefail
mkdir -p "$OUT"
timeout 150 python3 bench/peers_conv.py .devcarry/y/shapes.txt > "$OUT/peers.jsonl" 2> "$OUT/peers.err"
grep '"wgrad"' "$OUT/peers.jsonl"
bash bench/results/2026-12-04-h200-s14/call5/run.sh .devcarry/y
