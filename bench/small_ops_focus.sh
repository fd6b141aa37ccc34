#!/usr/bin/env bash
# A short device run of the small-op kernels at chosen shapes (run from the repo root on the
# device machine after scripts/device-prepare.sh here): the prepared kernels whose folder
# matches OPS_ROWS (a regex over NAME@SHAPE in .devcarry/ops) and the shape-variant manifests
# (.devcarry/any) at ANY_SHAPES, each verified and timed; the full grid with its torch/Triton
# peers is bench/h200_session.sh. Logs go to $OUT (or ./out).
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}
mkdir -p "$OUT"
export ROCKE_DEVICE=cuda
ROWS=${OPS_ROWS:-.}
ANY=${ANY_SHAPES:-1000,32000 65536,1000 8192,5000}
: > "$OUT/rocke_ops.txt"
run() {   # NAME SHAPE MANIFEST
  echo "== $1 $2" >> "$OUT/rocke_ops.txt"
  timeout 30 "$D/bin/rocke" run "$3" --shape "$2" --verify --device cuda --warmup 20 --iters 100 \
    >> "$OUT/rocke_ops.txt" 2>&1 || echo "FAILED $1 $2" >> "$OUT/rocke_ops.txt"
}
for m in "$D"/ops/*/manifest.json; do
  dir=$(basename "$(dirname "$m")")
  [[ $dir =~ $ROWS ]] || continue
  run "${dir%@*}" "${dir#*@}" "$m"
done
for m in "$D"/any/*/manifest.json; do
  [ -f "$m" ] || continue
  for shape in $ANY; do run "$(basename "$(dirname "$m")")-any" "$shape" "$m"; done
done
awk '/^== /{n=$2 "@" $3} /^PerfJSON: /{sub(/^PerfJSON: \{/, "{\"name\": \"" n "\", "); print}' "$OUT/rocke_ops.txt" \
  > "$OUT/rocke_ops.jsonl"
python3 - "$OUT/rocke_ops.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print("%-34s %8.0f GB/s  bad %d  %s" % (r["name"], r["gbps"], r["bad_count"], r["kernel"][-48:]))
PY
