#!/usr/bin/env bash
# The main job (`make run`): build a softmax, an rmsnorm, a GEMM, an attention
# forward and a convolution for the default target and for the local device's target, run each with --verify on the
# best device that can run it (the GPU when its target matches, else the CPU
# emulator) and print the results. Usage: scripts/main-job.sh [BUILD_DIR]
set -euo pipefail

BUILD=${1:-build}
ROCKE="$BUILD/rocke"
OUT="$BUILD/main-job"
SHAPE=${ROCKE_MAIN_SHAPE:-256,4096}
GEMM_SHAPE=${ROCKE_MAIN_GEMM_SHAPE:-257,320,192}
ATTN_SHAPE=${ROCKE_MAIN_ATTN_SHAPE:-1,4,2,100,130,64}     # B,Hq,Hkv,Sq,Skv,D (causal)
CONV_SHAPE=${ROCKE_MAIN_CONV_SHAPE:-2,16,15,13,32,3,3}    # N,C,H,W,K,R,S
if [ ! -x "$ROCKE" ]; then
  echo "main-job: $ROCKE not found: run 'make build' first" >&2
  exit 1
fi
rm -rf "$OUT"
mkdir -p "$OUT"

field() { sed -n "s/^  \"$2\": \"\\(.*\\)\",\$/\\1/p" "$1/manifest.json" | head -1; }

# The device's target: a throwaway build for --target device.
"$ROCKE" build softmax --target device --ir-only --shape "$SHAPE" -o "$OUT/probe" >/dev/null
DEVICE_TARGET=$(field "$OUT/probe" target)
DEFAULT_TARGET=$("$ROCKE" targets | sed -n 's/^\([a-z0-9_]*\) .*(default).*/\1/p' | head -1)
[ -n "$DEFAULT_TARGET" ] || DEFAULT_TARGET=gfx950
echo "main-job: default target $DEFAULT_TARGET, device target $DEVICE_TARGET, shape $SHAPE"

status=0
for fam in softmax rmsnorm gemm attention conv; do
  shape=$SHAPE extra=()
  case $fam in
    gemm) shape=$GEMM_SHAPE ;;
    attention) shape=$ATTN_SHAPE extra=(--mask causal --head-dim 64) ;;
    conv) shape=$CONV_SHAPE ;;
  esac
  for target in "$DEFAULT_TARGET" "$DEVICE_TARGET"; do
    dir="$OUT/$fam-$target"
    [ -d "$dir" ] && continue
    echo
    echo "== $fam for $target"
    if ! "$ROCKE" build "$fam" --dtype bf16 "${extra[@]}" --target "$target" --shape "$shape" -o "$dir"; then
      echo "main-job: no code object for $target; building the IR for the emulator instead"
      "$ROCKE" build "$fam" --dtype bf16 "${extra[@]}" --target "$target" --shape "$shape" --ir-only -o "$dir"
    fi
    device=emu
    if [ "$target" = "$DEVICE_TARGET" ] && [ "$(field "$dir" binary_kind)" != ir ]; then device=auto; fi
    if ! "$ROCKE" run "$dir/manifest.json" --verify --device "$device"; then status=1; fi
  done
done
echo
if [ $status -eq 0 ]; then echo "main-job: all kernels verified"; else echo "main-job: verification FAILED"; fi
exit $status
