#!/usr/bin/env bash
# Session 10 call 2: the unified build's three kernels (key split, 16 rows, whole keys) through rocke run's
# per-batch pick: one 8192-token prefill, the mixed batch (4 x 512 + 124 decodes), 256 decodes.
set -uo pipefail
D=.devcarry
nvidia-smi --query-gpu=name,driver_version --format=csv
for b in prefill:8192:8192 mixed:@$D/u/mixed.lengths decode:@$D/u/decode.lengths; do
  n=${b%%:*}; l=${b#*:}; case $l in @*) l=$(cat "${l#@}");; esac
  echo "== $n"
  $D/bin/rocke run $D/u/main/manifest.json --shape 32,8,128 --page-size 16 --lengths "$l" --verify --device cuda \
    --warmup 20 --iters 100 2>&1 | grep -E "unified: rows|bad=|PerfJSON" | sed 's/"kernel".*//'
done
