#!/usr/bin/env bash
# rocke — the IR a kernel builds must not depend on the C compiler that built
# rocke. Builds a grid of family instances (every family x dtype x a few knob
# settings x gfx942, gfx950, sm_90a) and the gpu-check kernels with two rocke
# binaries and compares the ckdsl.ir text and the LLVM IR text byte for byte.
#
#   scripts/check-ir-determinism.sh ROCKE_A ROCKE_B [WORKDIR]
#   scripts/check-ir-determinism.sh --cc CC ROCKE_A [WORKDIR]
#       (builds ROCKE_B, the library and CLI only, with compiler CC in build-CC/)
#
# Exit 0 when every file matches, 1 on a difference (the first lines of each
# diff are printed), 2 on misuse or when a build fails. See docs/kernels.md.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"

if [ "${1:-}" = "--cc" ]; then
  [ $# -ge 3 ] || { echo "usage: $0 --cc CC ROCKE_A [WORKDIR]" >&2; exit 2; }
  cc="$2"
  command -v "$cc" >/dev/null || { echo "check-ir-determinism: compiler $cc not found (scripts/install-deps.sh installs clang-22)" >&2; exit 2; }
  bdir="$here/build-$(basename "$cc")"
  if [ ! -f "$bdir/CMakeCache.txt" ]; then
    cmake -S "$here" -B "$bdir" -DCMAKE_C_COMPILER="$cc" -DROCKE_TESTS=OFF -DROCKE_WERROR=ON >/dev/null
  fi
  cmake --build "$bdir" --target rocke -j"${JOBS:-2}" >/dev/null
  set -- "$3" "$bdir/rocke" "${4:-}"
fi
[ $# -ge 2 ] || { echo "usage: $0 ROCKE_A ROCKE_B [WORKDIR] | --cc CC ROCKE_A [WORKDIR]" >&2; exit 2; }
a="$1" b="$2"
work="${3:-}"
if [ -z "$work" ]; then work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT; fi

# family and knobs; each line is built for every dtype and target
grid() {
  cat <<'EOF'
elementwise --op add
elementwise --op gelu_tanh --unroll 2
elementwise --op silu --tail masked --vec 2
elementwise --op div --shape 1000
reduce --op sum
reduce --op mean --chunks 0
reduce --op max --rows_per_block 4 --shape 512,700
softmax
softmax --chunks 0
softmax --keep_exps true --chunks 2
layernorm
layernorm --residual true --save_stats true
layernorm --chunks 0 --residual true
rmsnorm
rmsnorm --save_stats true --shape 64,5000
rmsnorm --chunks 0
transpose
transpose --tile_m 32 --lds_pad 0
EOF
}

# build_all ROCKE OUT: every grid instance's .ir (and .ll for two targets), the gpu-check kernels' .ll/.ptx
build_all() {
  local rocke="$1" out="$2" n=0
  mkdir -p "$out"
  while read -r fam knobs; do
    for dt in f16 bf16 f32; do
      for t in gfx942 gfx950 sm_90a; do
        n=$((n + 1))
        local d="$out/$n"
        # shellcheck disable=SC2086
        if ! "$rocke" build "$fam" --dtype "$dt" --target "$t" $knobs --ir-only -o "$d" >/dev/null 2>"$d.err"; then
          echo "check-ir-determinism: $rocke build $fam --dtype $dt --target $t $knobs failed:" >&2
          cat "$d.err" >&2
          return 2
        fi
        rm -f "$d.err" "$d"/manifest*.json   # timings (and the shape variants' manifests)
        if [ "$t" != gfx942 ]; then
          for ir in "$d"/*.ir; do "$rocke" lower "$ir" --target "$t" -o "${ir%.ir}.ll"; done
        fi
      done
    done
  done < <(grid)
  # attention (16-bit only): every mask, LSE and varlen, on an NVIDIA and an AMD target
  for knobs in "--mask none" "--mask causal --lse true" "--mask window --layout varlen --head-dim 64 --shape 2,4,2,256,256,64"; do
    for t in gfx942 sm_90a; do
      n=$((n + 1))
      local d="$out/$n"
      # shellcheck disable=SC2086
      if ! "$rocke" build attention --dtype bf16 --target "$t" $knobs --ir-only -o "$d" >/dev/null 2>"$d.err"; then
        echo "check-ir-determinism: $rocke build attention --target $t $knobs failed:" >&2
        cat "$d.err" >&2
        return 2
      fi
      rm -f "$d.err" "$d/manifest.json"
      for ir in "$d"/*.ir; do "$rocke" lower "$ir" --target "$t" -o "${ir%.ir}.ll"; done
    done
  done
  for t in sm_90a gfx950; do
    ROCKE_CACHE=0 "$rocke" gpu-check --emit "$out/check_$t" --target "$t" >/dev/null ||
      { echo "check-ir-determinism: $rocke gpu-check --emit --target $t failed" >&2; return 2; }
    rm -f "$out/check_$t"/*.cubin "$out/check_$t"/*.hsaco
  done
}

build_all "$a" "$work/a" || exit 2
build_all "$b" "$work/b" || exit 2
nfiles=$(find "$work/a" -type f | wc -l)
if diff -rq "$work/a" "$work/b" >"$work/differ"; then
  echo "check-ir-determinism: $nfiles files identical between $a and $b"
  exit 0
fi
echo "check-ir-determinism: IR differs between $a and $b:" >&2
grep -c . "$work/differ" | sed 's/^/  files differing: /' >&2
head -n 5 "$work/differ" >&2
while read -r _ fa _ fb _; do
  diff "$fa" "$fb" | head -n 8 >&2 || true
done < <(grep '^Files' "$work/differ" | head -n 3)
echo "Builder calls passed as arguments of one call run in an unspecified order: assign them to locals" >&2
echo "first (docs/kernels.md, 'Deterministic IR'; scripts/lint_builder_order.py finds most sites)." >&2
exit 1
