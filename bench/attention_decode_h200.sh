#!/usr/bin/env bash
# Attention decode on the device machine (run from the repo root after
# `scripts/device-prepare.sh build sm_90a` here, which builds the kernels of
# bench/attention_decode_shapes.txt into .devcarry/attn_decode/): the copy
# bandwidth and torch SDPA on the gathered contiguous cache in the same run,
# then every rocke kernel verified and timed over its paged cache; a summary
# gives each KV GB/s as % of the run's copy bandwidth, and each fp8 row's
# speed against its bf16 row. Logs go to $OUT (or ./out). ROWS (an extended
# regular expression, default all) picks rows by name, so the list can be
# split over calls: ROWS='^(b32|b128)' then ROWS='^(b8|b16|mixed)'.
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}
ROWS=${ROWS:-.}
mkdir -p "$OUT"
SHAPES="$OUT/shapes.txt"
grep -v "^#" bench/attention_decode_shapes.txt | awk -v re="$ROWS" 'NF && $1 ~ re' > "$SHAPES"
export ROCKE_DEVICE=cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 | tee "$OUT/gpu.txt"
# mixed batches: lengths drawn uniformly from 1..CTX (seed 14), one file per shape
while read -r name B Hq Hkv Sq ctx Dh page kind knobs; do
  [ "$kind" = mixed ] || continue
  python3 -c "import random; r = random.Random(14); print(' '.join(str(r.randint(1, $ctx)) for _ in range($B)))" \
    < /dev/null > "$OUT/$name.lengths"
done < "$SHAPES"
echo "== peers (copy, torch SDPA)"
PYTHONUNBUFFERED=1 python3 bench/attention_decode_peers.py "$SHAPES" "$OUT" \
  > "$OUT/decode_peers.jsonl" 2> "$OUT/decode_peers.err" || tail -5 "$OUT/decode_peers.err"
echo "== rocke attention decode"
: > "$OUT/rocke_decode.txt"
while read -r name B Hq Hkv Sq ctx Dh page kind knobs; do
  [ -n "$name" ] || continue
  m="$D/attn_decode/$name/manifest.json"
  lengths=equal
  [ "$kind" = mixed ] && lengths="$OUT/$name.lengths"
  echo "== $name" >> "$OUT/rocke_decode.txt"
  "$D/bin/rocke" run "$m" --shape "$B,$Hq,$Hkv,$Sq,$ctx,$Dh" --page-size "$page" --lengths "$lengths" --verify \
    --device cuda --warmup 20 --iters 100 < /dev/null >> "$OUT/rocke_decode.txt" 2>&1 || echo "FAILED $name" >> "$OUT/rocke_decode.txt"
done < "$SHAPES"
# the PerfJSON lines, each tagged with its shape's name
awk '/^== /{n=$2} /^PerfJSON: /{sub(/^PerfJSON: \{/, "{\"name\": \"" n "\", \"impl\": \"rocke\", "); print}' \
  "$OUT/rocke_decode.txt" > "$OUT/rocke_decode.jsonl"
python3 - "$OUT/decode_peers.jsonl" "$OUT/rocke_decode.jsonl" <<'PY' | tee "$OUT/summary.txt"
import json, sys
rows = [json.loads(l) for f in sys.argv[1:] for l in open(f) if l.strip()]
copy = next((r["gbps"] for r in rows if r["name"] == "copy"), None)
print(f"copy bandwidth: {copy:.0f} GB/s" if copy else "copy bandwidth: missing")
for r in rows:
    if r["name"] == "copy" or "gbps" not in r or "same_as" in r:
        continue
    pct = f"{100 * r['gbps'] / copy:5.1f}% of copy" if copy else ""
    print(f"{r['name']:22s} {r['impl']:24s} {r['ms']:9.4f} ms {r['gbps']:8.0f} GB/s {pct}")
# fp8 caches against the bf16 kernel of the same row name without "-fp8" (issue 14 asks >= 1.8x tokens/s)
ms = {r["name"]: r["ms"] for r in rows if r.get("impl") == "rocke" and "ms" in r}
for n, t in ms.items():
    base = n.replace("-fp8", "")
    if n != base and base in ms:
        print(f"{n:22s} fp8 / bf16 tokens per second: {ms[base] / t:4.2f}x ({base})")
PY
