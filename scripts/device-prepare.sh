#!/usr/bin/env bash
# Build here everything an NVIDIA GPU session needs (the GPU machine has no
# LLVM): the CLI and the launch benchmark, gpu-check kernels, and the small-op
# kernels and the GEMM kernels at the benchmark shapes, every family's default
# instance for the GPU-vs-emulator check, all into .devcarry/
# (ignored by git).
# Usage: scripts/device-prepare.sh [BUILD_DIR] [TARGET]
set -euo pipefail
# bf16 unless the spec names its own dtype
dtype_of() { case " $* " in *" --dtype "*) ;; *) echo "--dtype bf16" ;; esac; }
B=${1:-build}
T=${2:-sm_90a}
D=.devcarry
rm -rf "$D"
mkdir -p "$D/bin" "$D/gpucheck" "$D/bench" "$D/ops"
cp "$B/rocke" "$B/bench/bench_launch" "$B/bench/bench_ir" "$D/bin/"
"$B/rocke" gpu-check --emit "$D/gpucheck" --target "$T"
ROCKE_BENCH_EMIT="$D/bench" ROCKE_BENCH_TARGET="$T" "$B/bench/bench_launch"
SHAPES=${ROCKE_BENCH_SHAPES:-"32768,4096 4096,32768 512,4096"}
for shape in $SHAPES; do
  while read -r name spec; do
    "$B/rocke" build $spec $(dtype_of $spec) --target "$T" --shape "$shape" -o "$D/ops/$name@$shape" >/dev/null
  done <<'OPS'
add elementwise --op add
copy elementwise --op copy
sum reduce --op sum
softmax softmax
rmsnorm rmsnorm
layernorm layernorm
transpose transpose
OPS
done
# Issue 15's shape grid (odd rows, vocabulary sizes, few and many rows), bf16
# plus f16/f32 at a few shapes: the heuristic's pick for each
GRID=${ROCKE_BENCH_GRID:-"65536,1000 16384,2047 8192,5000 1024,50257 1000,32000 1000,151936 1,262144 4,262144 65536,127 1,4097 65536,17 65536,64 4097,4097"}
for shape in $GRID; do
  for op in "sum reduce --op sum" "softmax softmax" "rmsnorm rmsnorm" "layernorm layernorm" "transpose transpose"; do
    set -- $op
    name=$1; shift
    "$B/rocke" build "$@" --dtype bf16 --target "$T" --shape "$shape" -o "$D/ops/$name@$shape" >/dev/null
  done
done
# Built without --shape: the shape variants behind one manifest (docs/kernels.md,
# "Shape variants"), run over the same grid plus short rows; rocke run picks
# the variant for each shape (its kernel name is in the output)
for op in "sum reduce --op sum" "softmax softmax" "rmsnorm rmsnorm" "layernorm layernorm"; do
  set -- $op
  name=$1; shift
  "$B/rocke" build "$@" --dtype bf16 --target "$T" -o "$D/any/$name" >/dev/null
done
# the shapes bench/h200_session.sh runs each of them at (one copy of each manifest: they hold
# dozens of variants, too many bytes to copy per shape)
echo $GRID 65536,17 65536,64 > "$D/any/shapes.txt"
for shape in 16384,2047 1000,151936; do
  for dt in f16 f32; do
    for op in softmax layernorm rmsnorm; do
      "$B/rocke" build $op --dtype $dt --target "$T" --shape "$shape" -o "$D/ops/$op-$dt@$shape" >/dev/null
    done
  done
done
# The fused ops at their own shapes (bench/peers_small_ops.py FUSED_SHAPES): NAME SHAPE SPEC...
while read -r name shape spec; do
  [ -n "$name" ] || continue
  "$B/rocke" build $spec $(dtype_of $spec) --target "$T" --shape "$shape" -o "$D/ops/$name@$shape" >/dev/null
done <<'FUSED'
add_rmsnorm_quant 32768,4096 add_rmsnorm_quant
add_rmsnorm_quant 4096,8192 add_rmsnorm_quant
rope 4096,32,8,128,64,8192 rope
rope-gptj 4096,32,8,128,64,8192 rope --style gptj
topk_softmax 16384,128,8 topk_softmax
topk_softmax 16384,64,2 topk_softmax
permute 16,2048,2048 permute
permute 64,1000,257 permute
FUSED
# Variants measured next to the heuristic's pick: NAME SHAPE KNOBS...
# (-span / -direct: the two stages of the row kernels at odd rows, docs/kernels.md "Span stage";
# -prev: the geometry before filled rows, "Filled rows"; -nfast: transpose tiles along N)
while read -r name shape spec; do
  [ -n "$name" ] || continue
  "$B/rocke" build $spec $(dtype_of $spec) --target "$T" --shape "$shape" -o "$D/ops/$name@$shape" >/dev/null
done <<'VARIANTS'
softmax-packed 32768,4096 softmax --keep_exps false
layernorm-mb1 4096,32768 layernorm --min_blocks_per_sm 1
layernorm-f32 32768,4096 layernorm --dtype f32
layernorm-f32-mb4 32768,4096 layernorm --dtype f32 --min_blocks_per_sm 4
layernorm-looped 1000,151936 layernorm --slices 1
layernorm-looped-u4 1000,151936 layernorm --slices 1 --unroll 4
layernorm-f16-looped-u4 1000,151936 layernorm --dtype f16 --slices 1 --unroll 4
layernorm-b1024-sl5 1000,151936 layernorm --block_size 1024 --chunks 4 --slices 5 --rows_per_block 1 --tail masked --unroll 1
rmsnorm-looped 1000,151936 rmsnorm --slices 1
layernorm-k7 1024,50257 layernorm --slices 1
rmsnorm-k7 1024,50257 rmsnorm --slices 1
softmax-looped 1000,151936 softmax --slices 1
softmax-k7 1024,50257 softmax --slices 1
softmax-f32-k8 4096,32768 softmax --dtype f32 --slices 1
layernorm-f32-k8 4096,32768 layernorm --dtype f32 --slices 1
softmax-span 16384,2047 softmax --stage span
softmax-direct 16384,2047 softmax --stage direct
softmax-span 65536,127 softmax --stage span
softmax-direct 65536,127 softmax --stage direct
softmax-span 4096,4097 softmax --stage span
softmax-direct 4096,4097 softmax --stage direct
layernorm-span 16384,2047 layernorm --stage span
layernorm-direct 16384,2047 layernorm --stage direct
layernorm-span 65536,127 layernorm --stage span
layernorm-direct 65536,127 layernorm --stage direct
rmsnorm-span 16384,2047 rmsnorm --stage span
rmsnorm-direct 16384,2047 rmsnorm --stage direct
rmsnorm-span 65536,127 rmsnorm --stage span
rmsnorm-direct 65536,127 rmsnorm --stage direct
sum-span 16384,2047 reduce --op sum --stage span
sum-direct 16384,2047 reduce --op sum --stage direct
sum-span 65536,127 reduce --op sum --stage span
sum-direct 65536,127 reduce --op sum --stage direct
layernorm-span 4096,4097 layernorm --stage span
layernorm-direct 4096,4097 layernorm --stage direct
softmax-prev 4096,4097 softmax --stage direct --block_size 512 --rows_per_block 1 --chunks 2
rmsnorm-prev 4096,4097 rmsnorm --block_size 512 --rows_per_block 1 --chunks 2
softmax-prev 16384,2047 softmax --stage direct --block_size 256 --rows_per_block 1 --chunks 2
transpose-nfast 1000,32000 transpose --m_fast false
transpose-nfast 1000,151936 transpose --m_fast false
VARIANTS
# GEMM at the benchmark shapes (bench/gemm_shapes.txt), the heuristic's pick
mkdir -p "$D/gemm"
grep -v '^#' bench/gemm_shapes.txt | while read -r M N K layout dtype; do
  [ -n "$M" ] || continue
  "$B/rocke" build gemm --layout "$layout" --dtype "$dtype" --target "$T" --shape "$M,$N,$K" \
    -o "$D/gemm/$layout-$dtype@$M,$N,$K" >/dev/null
done
# Every family's default instance for the GPU-vs-emulator check (run there:
# scripts/gpu-check-emu.sh .devcarry/bin .devcarry/checkemu)
scripts/gpu-check-emu.sh --build-only "$B" "$T" "$D/checkemu"
# Convolutions at the benchmark shapes (bench/conv_shapes.txt) for bench/conv_h200.sh run
bench/conv_h200.sh prepare "$B/rocke" "$T"
# An ahead-of-time app (docs/aot.md): the example linked with its generated
# launcher, built here; on the GPU it needs only libcuda (bench/aot_gpu.sh)
mkdir -p "$D/aot"
"$B/rocke" aot softmax --dtype f32 --targets "$T",gfx942,gfx950 -o "$D/aot" --name aot_softmax >/dev/null
${CC:-cc} -std=c17 -O2 -Wall -Wextra -Werror -I"$D/aot" -o "$D/aot/aot_softmax" examples/aot_softmax.c \
  "$D/aot/aot_softmax.c" -ldl -lm
# Issue 23's sweeps compiled here for bench/sweep_h200.sh run (ROCKE_BENCH_SWEEP=1: a few minutes)
if [ "${ROCKE_BENCH_SWEEP:-0}" = 1 ]; then bench/sweep_h200.sh prepare "$B/rocke" "$T"; fi
# The Hopper GEMM knob sweep for bench/gemm_sweep_h200.sh run (ROCKE_BENCH_GEMM_SWEEP=1)
if [ "${ROCKE_BENCH_GEMM_SWEEP:-0}" = 1 ]; then bench/gemm_sweep_h200.sh prepare "$B/rocke" "$T"; fi
# Attention at the issue's anchors (bench/attention_shapes.txt), the heuristic's pick
mkdir -p "$D/attention"
grep -v '^#' bench/attention_shapes.txt | while read -r name nb hq hkv sq skv dh mask knobs; do
  [ -n "$name" ] || continue
  extra=()   # column 9: knobs over the heuristic's pick, "path=mma,schedule=plain" -> --path mma --schedule plain
  for kv in ${knobs//,/ }; do [ "${kv%%=*}" = lengths ] || extra+=("--${kv%%=*}" "${kv#*=}"); done   # lengths: run's
  "$B/rocke" build attention --dtype bf16 --head-dim "$dh" --mask "$mask" --target "$T" \
    --shape "$nb,$hq,$hkv,$sq,$skv,$dh" "${extra[@]}" -o "$D/attention/$name" >/dev/null
done
# Attention decode at the benchmark shapes (bench/attention_decode_shapes.txt;
# bench/attention_decode_h200.sh runs them): the heuristic's rows and splits
mkdir -p "$D/attn_decode"
grep -v '^#' bench/attention_decode_shapes.txt | while read -r name nb Hq Hkv Sq ctx Dh page kind knobs; do
  [ -n "$name" ] || continue
  # shellcheck disable=SC2086
  "$B/rocke" build attention --mode decode --dtype bf16 --head-dim "$Dh" --page-size "$page" $knobs --target "$T" \
    --shape "$nb,$Hq,$Hkv,$Sq,$ctx,$Dh" -o "$D/attn_decode/$name" >/dev/null
done
# Unified attention at the benchmark batches (bench/attention_unified_shapes.txt;
# bench/attention_unified_h200.sh runs them), and the mixed batch's parts with the
# prefill (varlen, causal) and decode kernels for the back-to-back baseline
mkdir -p "$D/attn_unified" "$D/attn_unified_parts"
grep -v '^#' bench/attention_unified_shapes.txt | while read -r name Hq Hkv Dh page batch knobs; do
  [ -n "$name" ] || continue
  # shellcheck disable=SC2086
  "$B/rocke" build attention --mode unified --dtype bf16 --head-dim "$Dh" --page-size "$page" $knobs --target "$T" \
    --shape "1,$Hq,$Hkv,1,1,$Dh" -o "$D/attn_unified/$name" >/dev/null
done
"$B/rocke" build attention --dtype bf16 --head-dim 128 --mask causal --layout varlen --target "$T" \
  --shape 4,32,8,512,4096,128 -o "$D/attn_unified_parts/prefill" >/dev/null
"$B/rocke" build attention --mode decode --dtype bf16 --head-dim 128 --page-size 16 --target "$T" \
  --shape 124,32,8,1,16384,128 -o "$D/attn_unified_parts/decode" >/dev/null
# kv_append at the benchmark shapes (bench/kv_append_shapes.txt; bench/kv_append_h200.sh runs them)
mkdir -p "$D/kv_append"
grep -v '^#' bench/kv_append_shapes.txt | while read -r name ntok Hq Hkv Dh pages psize rope kv; do
  [ -n "$name" ] || continue
  "$B/rocke" build kv_append --dtype bf16 --rope "$rope" --kv-dtype "$kv" --target "$T" \
    --shape "$ntok,$Hq,$Hkv,$Dh,$pages,$psize" -o "$D/kv_append/$name" >/dev/null
done
# Every wgmma schedule at the issue's anchors, and at its unaligned 2047x3001x4093 with K
# rounded to 4096 (all TMA), next to the pick above
for shape in 4096,4096,4096 8192,8192,8192 6144,5120,3072 2047,3001,4096; do
  for sched in plain ws persistent pingpong; do
    "$B/rocke" build gemm --layout rc --dtype bf16 --target "$T" --shape "$shape" --path wgmma \
      --schedule "$sched" -o "$D/gemm/rc-bf16-$sched@$shape" >/dev/null
  done
done
# The odd K itself: A and B copied by the threads (cp.async or 2-byte stores), schedule=plain only
"$B/rocke" build gemm --layout rc --dtype bf16 --target "$T" --shape 2047,3001,4093 --path wgmma \
  --schedule plain -o "$D/gemm/rc-bf16-plain@2047,3001,4093" >/dev/null
# Session 6 variant rows next to the heuristic's picks: the decode shapes on each path
# (stream: weights read straight into mma.sync fragments; mma: the skinny LDS kernel), the
# unaligned shape on the gathered mma.sync kernel, and wider mma.sync tiles at 4096^3
for shape in 1,8192,8192 16,8192,8192 64,8192,8192; do
  for path in stream mma; do
    "$B/rocke" build gemm --layout rc --dtype bf16 --target "$T" --shape "$shape" --path "$path" \
      -o "$D/gemm/rc-bf16-$path@$shape" >/dev/null
  done
done
"$B/rocke" build gemm --layout rc --dtype bf16 --target "$T" --shape 2047,3001,4093 --path mma \
  -o "$D/gemm/rc-bf16-mma@2047,3001,4093" >/dev/null
while read -r tag knobs; do
  # shellcheck disable=SC2086
  "$B/rocke" build gemm --layout rc --dtype bf16 --target "$T" --shape 4096,4096,4096 --path mma $knobs \
    -o "$D/gemm/rc-bf16-mma-$tag@4096,4096,4096" >/dev/null
done <<'MMA'
t128x128s4 --tile 128x128x32 --warps 2x2 --stages 4
t128x256s4 --tile 128x256x32 --warps 2x4 --stages 4
t128x256s3 --tile 128x256x32 --warps 2x4 --stages 3
t256x128s4 --tile 256x128x32 --warps 4x2 --stages 4
MMA
# fp8 (bench/gemm_fp8_shapes.txt): the heuristic's pick per row, and the persistent schedule at the anchors;
# block-scale rows also with promote=serial (plain, persistent) and on ws and pingpong
grep -v '^#' bench/gemm_fp8_shapes.txt | while read -r M N K layout dtype scale; do
  [ -n "$M" ] || continue
  "$B/rocke" build gemm --layout "$layout" --dtype "$dtype" --scale "$scale" --target "$T" --shape "$M,$N,$K" \
    -o "$D/gemm/$layout-$dtype-$scale@$M,$N,$K" >/dev/null
  "$B/rocke" build gemm --layout "$layout" --dtype "$dtype" --scale "$scale" --target "$T" --shape "$M,$N,$K" \
    --schedule persistent -o "$D/gemm/$layout-$dtype-$scale-persistent@$M,$N,$K" >/dev/null
  [ "$scale" = block ] || continue
  # block scales: the promotion overlapped with the next block's wgmmas (promote=overlap, the default, above)
  # against session 5's serial one (promote=serial), and the other two schedules overlapped
  for sched in plain persistent; do
    "$B/rocke" build gemm --layout "$layout" --dtype "$dtype" --scale "$scale" --target "$T" --shape "$M,$N,$K" \
      --schedule "$sched" --promote serial -o "$D/gemm/$layout-$dtype-$scale-$sched-serial@$M,$N,$K" >/dev/null
  done
  for sched in ws pingpong; do
    "$B/rocke" build gemm --layout "$layout" --dtype "$dtype" --scale "$scale" --target "$T" --shape "$M,$N,$K" \
      --schedule "$sched" -o "$D/gemm/$layout-$dtype-$scale-$sched@$M,$N,$K" >/dev/null
  done
done
# The TMA-store epilogue (epilogue=tma) on the plain and persistent schedules at the bf16 anchors
for shape in 4096,4096,4096 8192,8192,8192; do
  for sched in plain persistent; do
    "$B/rocke" build gemm --layout rc --dtype bf16 --target "$T" --shape "$shape" --path wgmma \
      --schedule "$sched" --epilogue tma -o "$D/gemm/rc-bf16-$sched-tma@$shape" >/dev/null
  done
done
# The device needs the code objects and manifests, not the LLVM IR, nor the kernel IR except for the
# GPU-vs-emulator check: dropped so the folder fits what a device call carries (64 MiB)
find "$D" -name '*.ll' -delete
find "$D" -name '*.ir' -not -path "$D/checkemu/*" -delete
du -sh "$D"
