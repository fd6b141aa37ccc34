#!/bin/sh
# rocke — the Python package on the H200 (issue 19): every op against torch
# (python/tests/gpu_check_torch.py), the per-call host overhead next to torch
# (python/tests/bench_overhead.py: each cached op next to torch's, with its
# allocations, checked calls and work fills per call, and a breakdown of a
# cached softmax call: key, allocation, stream, pointer writes, the packed
# launch, the Python between them) and a small transformer block, eager vs
# inductor vs rocke.torch_backend (bench/python_block.py). The GPU machine has
# no LLVM: `prepare` (here, with LLVM) compiles every kernel those scripts
# call into a compile cache that travels with a copy of librocke.so (D below).
#
# usage (from the repository root):
#   bench/python_h200.sh prepare [--dir D]            here: copy build/librocke.so to D/lib and warm
#                                                    the cache D/cache (D: .devcarry/python)
#   bench/python_h200.sh run [--dir D] [--dry-run]    on the GPU machine; --dry-run does the CPU side
#                                                    only: files present, scripts parse, and every
#                                                    kernel found in D/cache with compiling off
# Carry D (python/ and bench/ are tracked and travel anyway).
# A GPU run writes the kernels it did not find to $OUT/misses.calls; copy that
# file to bench/python_h200.misses and prepare warms them too.
# Environment: PYTHON (default python3), OUT (default out/python_h200), ROCKE_H200_CALLS (the list
# file, default bench/python_h200.calls), BLOCK_ARGS (extra bench/python_block.py options).
set -eu
mode=${1:-}
[ $# -gt 0 ] && shift
dir=.devcarry/python
dry=0
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=${2:?--dir needs a folder}; shift 2 ;;
    --dry-run) dry=1; shift ;;
    *) echo "python_h200.sh: unknown option '$1' (legal: --dir D, --dry-run)" >&2; exit 2 ;;
  esac
done
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
cache=$dir/cache
py=${PYTHON:-python3}
calls=${ROCKE_H200_CALLS:-bench/python_h200.calls}
misses=bench/python_h200.misses
limit_mib=64
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
[ -f bench/python_h200.sh ] || { echo "python_h200.sh: run it from the repository root" >&2; exit 2; }
[ -f "$calls" ] || { echo "python_h200.sh: the call list $calls is missing" >&2; exit 1; }

# The block's own calls (its shapes follow BLOCK_ARGS), then the fixed list and any earlier misses.
lists() {
  blk=${TMPDIR:-/tmp}/rocke-block-calls.$$
  # shellcheck disable=SC2086
  "$py" bench/python_block.py --calls ${BLOCK_ARGS:-} > "$blk"
  printf -- "--list %s --list %s" "$calls" "$blk"
  [ -f "$misses" ] && printf -- " --list %s" "$misses"
  return 0
}

kib() { du -skL "$@" 2>/dev/null | awk '{s += $1} END {print s + 0}'; }

case $mode in
  prepare)
    [ -f build/librocke.so ] || { echo "python_h200.sh: build/librocke.so is missing (make build)" >&2; exit 1; }
    mkdir -p "$cache" "$dir/lib"
    cp -L build/librocke.so "$dir/lib/librocke.so.tmp" && mv "$dir/lib/librocke.so.tmp" "$dir/lib/librocke.so"
    # the shared libraries librocke needs beyond glibc and zlib (xxhash, msgpack-c, libelf): the GPU
    # machine may have none of them; run puts D/lib on LD_LIBRARY_PATH
    ldd "$dir/lib/librocke.so" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
      case $name in libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libz.so*|ld-linux*) continue ;; esac
      cp -L "$path" "$dir/lib/$name"
    done
    export ROCKE_LIB_DIR=$dir/lib
    # shellcheck disable=SC2046
    "$py" -m rocke warm --target sm_90a --cache "$cache" $(lists)
    rm -f "${TMPDIR:-/tmp}"/rocke-block-calls.$$
    lib=$(kib "$dir/lib"); pyk=$(kib python bench); ck=$(kib "$cache")
    total=$((lib + pyk + ck))
    printf "carried: librocke.so and its libraries %d KiB + cache %d KiB (+ python/ and bench/ %d KiB) = %.2f MiB (limit %d MiB)\n" \
      "$lib" "$ck" "$pyk" "$(echo "$total" | awk '{print $1 / 1024}')" "$limit_mib"
    [ "$total" -le $((limit_mib * 1024)) ] || { echo "python_h200.sh: over the carry limit" >&2; exit 1; }
    echo "carry: [\"${dir#"$PWD"/}\"]; then: bench/python_h200.sh run --dir ${dir#"$PWD"/}"
    ;;
  run)
    [ -d "$cache/v1/ship" ] || { echo "python_h200.sh: $cache holds no warmed kernels (bench/python_h200.sh prepare)" >&2; exit 1; }
    [ -f "$dir/lib/librocke.so" ] || { echo "python_h200.sh: $dir/lib/librocke.so is missing (prepare copies it)" >&2; exit 1; }
    out=${OUT:-out/python_h200}
    mkdir -p "$out"
    export ROCKE_LIB_DIR=$dir/lib ROCKE_CACHE_DIR=$cache ROCKE_WARM_MISSES=$out/misses.calls
    export LD_LIBRARY_PATH=$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    : > "$ROCKE_WARM_MISSES"
    if [ $dry = 1 ]; then
      "$py" -c 'import ast, sys; [ast.parse(open(f).read(), f) for f in sys.argv[1:]]' \
        python/tests/gpu_check_torch.py python/tests/bench_overhead.py bench/python_block.py
      # shellcheck disable=SC2046
      "$py" -m rocke warm --target sm_90a --cache "$cache" --check $(lists)
      rm -f "${TMPDIR:-/tmp}"/rocke-block-calls.$$
      echo "dry run: would run $py python/tests/gpu_check_torch.py; $py python/tests/bench_overhead.py;" \
           "$py bench/python_block.py ${BLOCK_ARGS:-}; results in $out"
      exit 0
    fi
    export ROCKE_TOOLCHAIN=${ROCKE_TOOLCHAIN:-none}     # no LLVM there: say so at once, never search for one
    rc=0
    "$py" python/tests/gpu_check_torch.py 2>&1 | tee "$out/gpu_check.txt" || true
    grep -q "^FAIL" "$out/gpu_check.txt" && rc=1
    "$py" python/tests/bench_overhead.py 2>&1 | tee "$out/overhead.txt" || rc=1
    # shellcheck disable=SC2086
    "$py" bench/python_block.py ${BLOCK_ARGS:-} 2>&1 | tee "$out/block.txt" || rc=1
    grep -q Traceback "$out/overhead.txt" "$out/block.txt" && rc=1
    echo "host overhead per cached call (issue 19's goal: <= 10 us from the Python call to the launch):"
    grep '^cuda ' "$out/overhead.txt" || echo "  (no cuda lines in $out/overhead.txt)"
    if [ -s "$ROCKE_WARM_MISSES" ]; then
      sort -u "$ROCKE_WARM_MISSES" -o "$ROCKE_WARM_MISSES"
      echo "kernels not in the cache ($(wc -l < "$ROCKE_WARM_MISSES")): copy $ROCKE_WARM_MISSES to $misses and prepare again"
      cat "$ROCKE_WARM_MISSES"
    fi
    exit $rc
    ;;
  *)
    sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'
    [ "$mode" = -h ] || [ "$mode" = --help ] || exit 2
    ;;
esac
