#!/usr/bin/env bash
# Session 10 call 1: the unified kernel's 8192-token prefill regression (2.32 -> 2.50 ms) taken apart.
# .devcarry/ab/{new,noks,old8}-s{2,3}: the unified bm64 kernel built by main (new), by main with the
# key-split body left out (noks), and by session 8's main (old8); each run by today's CLI, old8-s2 also by
# session 8's CLI. Then the mixed batch with and without the key-split body.
set -uo pipefail
D=.devcarry; OUT=${OUT:-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv | tee "$OUT/gpu.txt"
run() { # NAME CLI DIR LENGTHS
  echo "== $1" ; "$2" run "$D/ab/$3/manifest.json" --shape 32,8,128 --page-size 16 --lengths "$4" --verify --device cuda \
    --warmup 20 --iters 100 2>&1 | grep -E "time|bad|PerfJSON|error|FAIL" | head -4
}
for v in new-s2 new-s3 noks-s2 noks-s3 old8-s2 old8-s3; do run "prefill $v" $D/bin/rocke $v 8192:8192; done
run "prefill old8-s2 (old CLI)" $D/bin/rocke_old8 old8-s2 8192:8192
for v in new-s2 new-s3 noks-s3 new-s2 noks-s2; do run "mixed $v" $D/bin/rocke $v "$(cat $D/ab/mixed.lengths)"; done
for v in new-s2 noks-s2 old8-s2; do run "prefill again $v" $D/bin/rocke $v 8192:8192; done
