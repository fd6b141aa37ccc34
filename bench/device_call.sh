#!/usr/bin/env bash
# One device call that runs several bench scripts in turn, each under its own
# time limit and into its own folder, then packs every log into one archive
# (a device call returns few files). Run from the repo root with .devcarry
# carried: bench/device_call.sh NAME:SECONDS:COMMAND ... ; OUT defaults to ./out.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 | tee "$OUT/gpu.txt"
for job in "$@"; do
  name=${job%%:*}; rest=${job#*:}; secs=${rest%%:*}; cmd=${rest#*:}
  mkdir -p "$OUT/$name"
  start=$(date +%s)
  echo "=== $name (limit ${secs}s): $cmd"
  OUT="$OUT/$name" timeout --kill-after=5 "$secs" bash -c "$cmd" > "$OUT/$name/stdout.txt" 2>&1
  rc=$?
  echo "=== $name rc=$rc in $(( $(date +%s) - start ))s"
  # the summaries a reader wants first; every raw log is in the archive
  tail -n "${DEVICE_CALL_TAIL:-25}" "$OUT/$name/stdout.txt"
done
tar -C "$OUT" -czf "$OUT/logs.tgz" --exclude=logs.tgz .
