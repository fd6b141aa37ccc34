#!/usr/bin/env bash
# The ahead-of-time example on a GPU (run on the device machine from the repo
# root, after scripts/device-prepare.sh here): it must pick the object for the
# GPU (not the emulator) and pass its element-by-element check; prints what
# ran. Logs go to $OUT (or ./out). docs/aot.md.
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}
mkdir -p "$OUT"
app="$D/aot/aot_softmax"
[ -x "$app" ] || { echo "aot_gpu: $app is missing: run scripts/device-prepare.sh first" >&2; exit 2; }
"$app" --load-only 2>&1 | tee "$OUT/aot.txt"
"$app" 2>&1 | tee -a "$OUT/aot.txt"
rc=${PIPESTATUS[0]}
grep -q "running on \(cuda\|hip\) " "$OUT/aot.txt" || { echo "aot_gpu: the app did not run on a GPU" >&2; rc=1; }
exit "$rc"
