#!/usr/bin/env bash
# Session 11 call 3: the GEMM rows of command.sh (cluster=2 beside the heuristic, fp8 after the swizzled
# staging), the unified attention batches with the wgmma full-block body against the mma.sync one, and the
# Python package's GPU check and per-call overhead. Prepared here: call3/prepare.sh,
# `bash bench/attention_unified_h200.sh prepare`, `PYTHON=/usr/bin/python3 bench/python_h200.sh prepare`.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/gemm" "$OUT/unified" "$OUT/python"
OUT=$OUT/gemm timeout 200 bash bench/results/2026-12-03-h200-s11/call3/command.sh > "$OUT/gemm/stdout.txt" 2>&1
tail -45 "$OUT/gemm/stdout.txt"
OUT=$OUT/unified UNIFIED_PEERS=0 UNIFIED_ROWS='^(mixed|decode|prefill)-p16(-mma|-bm64|-whole)?$' \
  timeout 200 bash bench/attention_unified_h200.sh > "$OUT/unified/stdout.txt" 2>&1
tail -30 "$OUT/unified/stdout.txt"
OUT=$OUT/python timeout 150 bench/python_h200.sh run --dir .devcarry/python > "$OUT/python/stdout.txt" 2>&1
tail -40 "$OUT/python/stdout.txt"
