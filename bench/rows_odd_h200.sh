#!/usr/bin/env bash
# Odd row lengths of the norms (issue 15): this build's picks against another build's (OLD_CLI) at
# shapes where N % 8 != 0, the direct stage forced at the span's lengths, and the shape-less
# manifests of both builds. Two steps:
#   bench/rows_odd_h200.sh prepare [ROCKE] [OLD_ROCKE] [TARGET]   here: kernels into .devcarry/ops
#       (NAME@SHAPE, NAME-old@SHAPE, NAME-direct[-old]@SHAPE) and .devcarry/any (NAME, NAME-old)
#   bench/rows_odd_h200.sh run        on the device (repo root, .devcarry carried): copy/torch/
#       Triton peers at every shape, then bench/small_ops_focus.sh over the kernels
# ROWS_ODD_SHAPES picks the shapes (ROWS_ODD_ANY those of the shape-less manifests); logs go to $OUT (or ./out).
# ROWS_ODD_VARIANTS="SUFFIX:FAMILY:knob=v,knob=v ..." also builds FAMILY-SUFFIX@SHAPE with those knobs at
# every shape; OLD_ROCKE - skips the other build's kernels.
set -uo pipefail
D=.devcarry
SHAPES=${ROWS_ODD_SHAPES:-65536,1001 65536,767 16384,2047 4096,4097 8192,5001 1000,3001 32768,1999 1024,50257}
case "${1:-}" in
prepare)
  R=${2:-build/rocke} OLD=${3:?prepare needs OLD_ROCKE, another build\'s CLI} T=${4:-sm_90a}
  rm -rf "$D/ops" "$D/any"; mkdir -p "$D/ops" "$D/any" "$D/bin"
  cp "$R" "$D/bin/rocke"
  for shape in $SHAPES; do
    for f in layernorm rmsnorm; do
      "$R" build $f --dtype bf16 --target "$T" --shape "$shape" -o "$D/ops/$f@$shape" > /dev/null || echo "prepare: $f@$shape"
      [ "$OLD" = - ] || "$OLD" build $f --dtype bf16 --target "$T" --shape "$shape" -o "$D/ops/$f-old@$shape" \
        > /dev/null || echo "prepare: $f-old@$shape"
    done
    for v in ${ROWS_ODD_VARIANTS:-}; do
      IFS=: read -r suffix f knobs <<< "$v"
      extra=()
      for kv in ${knobs//,/ }; do extra+=("--${kv%%=*}" "${kv#*=}"); done
      "$R" build "$f" --dtype bf16 --target "$T" --shape "$shape" "${extra[@]}" -o "$D/ops/$f-$suffix@$shape" \
        > /dev/null || echo "prepare: $f-$suffix@$shape"
    done
  done
  [ "$OLD" = - ] || for shape in 65536,1001 65536,767; do
    for f in layernorm rmsnorm; do
      "$R" build $f --dtype bf16 --stage direct --target "$T" --shape "$shape" -o "$D/ops/$f-direct@$shape" > /dev/null
      "$OLD" build $f --dtype bf16 --stage direct --target "$T" --shape "$shape" -o "$D/ops/$f-direct-old@$shape" > /dev/null
    done
  done
  for f in layernorm rmsnorm; do
    "$R" build $f --dtype bf16 --target "$T" -o "$D/any/$f" > /dev/null || echo "prepare: $f-any"
    [ "$OLD" = - ] || "$OLD" build $f --dtype bf16 --target "$T" -o "$D/any/$f-old" > /dev/null || echo "prepare: $f-old-any"
  done
  find "$D/ops" "$D/any" \( -name '*.ll' -o -name '*.ir' -o -name '*.ptx' \) -delete
  du -sh "$D/ops" "$D/any"
  ;;
run)
  OUT=${OUT:-out}; mkdir -p "$OUT"
  PEERS_DTYPES=bf16 timeout 200 python3 bench/peers_small_ops.py $SHAPES > "$OUT/peers.jsonl" 2> "$OUT/peers.err" \
    || tail -3 "$OUT/peers.err"
  ANY_SHAPES="${ROWS_ODD_ANY:-$SHAPES}" OUT="$OUT" bash bench/small_ops_focus.sh
  python3 - "$OUT/peers.jsonl" "$OUT/rocke_ops.jsonl" <<'PY'
import json, sys
peers = {}
for l in open(sys.argv[1]):
    try: r = json.loads(l)
    except ValueError: continue
    peers.setdefault(r.get("shape", ""), {})[r.get("op", "") + "/" + r.get("impl", "")] = r.get("gbps", 0)
for l in open(sys.argv[2]):
    r = json.loads(l)
    p = peers.get("x".join(str(v) for v in r["shape"]), {})
    fam = r["name"].split("-")[0].split("@")[0]
    copy = max([v for k, v in p.items() if k.startswith("copy/")] or [0])
    torch = p.get(fam + "/torch", 0); tri = p.get(fam + "/triton", 0)
    print("%-36s %7.0f GB/s  copy %5.0f (%5.1f%%)  torch %5.0f  triton %5.0f  bad %d" % (
        r["name"], r["gbps"], copy, 100 * r["gbps"] / copy if copy else 0, torch, tri, r["bad_count"]))
PY
  ;;
*) echo "usage: bench/rows_odd_h200.sh prepare ROCKE OLD_ROCKE [TARGET] | run" >&2; exit 2 ;;
esac
