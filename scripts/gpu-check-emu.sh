#!/usr/bin/env bash
# The GPU-vs-emulator differential check over every family's default
# instance: each is built for the device's target at a small shape (the
# emulator runs it too) and run with `rocke run --device D --check-emu`;
# one line per family, exit 1 when one disagrees or fails. No GPU: a clear
# skip (exit 0) unless GPU_CHECK_EMU_DEVICE names one (emu: emulator against
# emulator, for a dry run here).
# Usage: scripts/gpu-check-emu.sh [BUILD_DIR] [KERNEL_DIR]
#   KERNEL_DIR: kernels built beforehand (scripts/gpu-check-emu.sh --build-only
#   B T DIR, run by scripts/device-prepare.sh) for a GPU machine without LLVM.
set -euo pipefail

# family and a small check shape (odd where the family allows it)
families() {
  cat <<'FAMILIES'
elementwise 100003
reduce 37,1000
softmax 37,1000
layernorm 37,1000
rmsnorm 37,1000
transpose 130,257
gemm 256,192,128
batched_gemm 2,128,96,64
add_rmsnorm_quant 37,1000
rope tokens=37,q_heads=4,kv_heads=2,head_dim=64,rot_half=32,max_pos=128
topk_softmax tokens=101,experts=64,k=2
permute 3,100,130
grouped_gemm groups=3,M=128,N=96,K=64
conv 2,8,9,7,16,3,3
conv3d 1,8,5,6,7,8,3,3,3
attention 1,4,2,37,45,64
kv_append 37,4,2,64,5,16
FAMILIES
}

build_all() {   # B T DIR [--ir-only]
  local b=$1 t=$2 dir=$3 extra=${4:-}
  mkdir -p "$dir"
  families | while read -r fam shape; do
    "$b/rocke" build "$fam" --target "$t" --shape "$shape" $extra -o "$dir/$fam" >/dev/null
  done
}

if [ "${1:-}" = "--build-only" ]; then
  build_all "$2" "$3" "$4"
  exit 0
fi

B=${1:-build}
KDIR=${2:-}
read -r kind target < <("$B/rocke" gpu-check --probe --device "${GPU_CHECK_EMU_DEVICE:-auto}")
if [ "$kind" = emu ] && [ -z "${GPU_CHECK_EMU_DEVICE:-}" ]; then
  echo "gpu-check-emu: no GPU found (CUDA or HIP): skipping the GPU-vs-emulator check" \
       "(GPU_CHECK_EMU_DEVICE=emu runs it emulator against emulator)"
  exit 0
fi
if [ -z "$KDIR" ]; then
  KDIR=$(mktemp -d)
  trap 'rm -rf "$KDIR"' EXIT
  build_all "$B" "$target" "$KDIR" "$([ "$kind" = emu ] && echo --ir-only)"
fi
echo "gpu-check-emu: $kind ($target) against the emulator, kernels in $KDIR"
bad=0
# a family that landed without a check shape here is a failure, not a gap
for fam in $("$B/rocke" build --list | awk '/^[a-z]/ {print $1}'); do
  if ! families | grep -q "^$fam "; then
    echo "$fam: FAIL (no check shape: add the family to scripts/gpu-check-emu.sh)"
    bad=$((bad + 1))
  fi
done
while read -r fam shape; do
  if out=$("$B/rocke" run "$KDIR/$fam/manifest.json" --device "$kind" --check-emu --iters 1 --warmup 0 2>&1); then
    echo "$fam: PASS $(grep -m1 '^check-emu: .*expected' <<<"$out")"
  else
    echo "$fam: FAIL"
    grep -E '^check-emu|rocke run:' <<<"$out" | sed 's/^/  /'
    bad=$((bad + 1))
  fi
done < <(families)
if [ "$bad" = 0 ]; then echo "gpu-check-emu: every family agrees"; else echo "gpu-check-emu: $bad families FAIL"; fi
[ "$bad" = 0 ]
