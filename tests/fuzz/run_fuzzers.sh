#!/usr/bin/env bash
# rocke — run every libFuzzer target of a fuzz build for SECONDS each.
#   run_fuzzers.sh BUILD_FUZZ SECONDS short   fixed seed, on a throw-away copy of the
#                                             checked-in corpus (ctest, CI)
#   run_fuzzers.sh BUILD_FUZZ SECONDS long    random seed, corpus kept in BUILD_FUZZ/corpus-<target>
#                                             across runs (make fuzz-long)
# A finding stops the run with the input saved under BUILD_FUZZ/findings/; fix it,
# then add it to tests/fuzz/corpus/<target>/ as crash_<what>. Exits 77 (ctest:
# skipped) when BUILD_FUZZ holds no fuzz build.
set -euo pipefail
build=${1:?usage: run_fuzzers.sh BUILD_FUZZ SECONDS short|long}
secs=${2:?seconds per target}
mode=${3:-short}
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/tests/fuzz
targets=(ir_parse manifest hsaco amdgpu_link cli)
if [ ! -x "$bin/fuzz_ir_parse" ]; then
  echo "run_fuzzers: no fuzz build in '$build' (make fuzz builds one); skipped"
  exit 77
fi
mkdir -p "$build/findings"
work=$(mktemp -d "${TMPDIR:-/tmp}/rocke-fuzz-XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
for t in "${targets[@]}"; do
  exe=$bin/fuzz_$t
  [ -x "$exe" ] || { echo "run_fuzzers: $exe missing; rebuild with make fuzz" >&2; status=1; continue; }
  seeds=$here/corpus/$t
  opts=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=0
        -artifact_prefix="$build/findings/$t-")
  [ -f "$here/$t.dict" ] && opts+=(-dict="$here/$t.dict")
  # the CLI parsers print a message for every bad input: keep their output out of the log
  [ "$t" = cli ] && opts+=(-close_fd_mask=3)
  if [ "$mode" = long ]; then
    corpus=$build/corpus-$t
    mkdir -p "$corpus"
    opts+=(-seed=0)
  else
    corpus=$work/$t
    mkdir -p "$corpus"
    opts+=(-seed=1)
  fi
  echo "run_fuzzers: $t for ${secs}s ($mode)"
  if ! "$exe" "${opts[@]}" "$corpus" "$seeds" > "$work/$t.log" 2>&1; then
    tail -40 "$work/$t.log" >&2
    echo "run_fuzzers: $t found a failure; the input is in $build/findings/ (add it to $seeds as crash_<what>)" >&2
    status=1
  fi
done
exit $status
