#!/usr/bin/env bash
# Session 12 call 3, GEMM part (kernels of call2/prepare_gemm.sh, and .devcarry/diag: ws + cluster=2 built by
# a local diagnostic patch that never multicasts, h->share_b = false, so each block of a pair loads all of B
# but keeps the pair's release protocol): timing of the diagnostic kernel beside ws with and without
# cluster=2; then the fp8 block-scale kernels with the scales loaded early (27141ec) beside call 2's.
# (Nsight Compute was cut for device time.)
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}; mkdir -p "$OUT"
run() { # DIR SHAPE
  r=$(timeout 40 $D/bin/rocke run "$1/manifest.json" --shape "$2" --verify --device cuda --warmup 20 --iters 100 2>&1)
  printf '%-34s %s %s %s\n' "$(basename "$1")" "$(grep -o '"bad_count": [0-9]*' <<<"$r" | head -1)" \
    "$(grep -o '"tflops": [0-9.]*' <<<"$r" | head -1)" "$(grep -m1 -iE 'error|refus|fail' <<<"$r")"
}
for rep in 1; do
  for s in 4096,4096,4096 8192,8192,8192; do
    for d in $D/diag/ws-cl2-nomc@$s $D/g12/ws-s3t@$s $D/g12/ws-cl2-s3t@$s; do run "$d" "$s"; done
  done
done | tee "$OUT/gemm_diag.txt"
# fp8 block scales: 27141ec's kernels (.devcarry/g12b, scales loaded when a block's wgmmas are issued) beside
# call 2's (g12, loaded before the wait that retires the block), interleaved
for rep in 1; do
  for s in 4096,4096,4096 8192,8192,8192; do
    for v in heur pers-serial ws; do run $D/g12/e4m3b-$v@$s $s; run $D/g12b/e4m3b-$v-early@$s $s; done
  done
done | tee "$OUT/gemm_fp8.txt"
