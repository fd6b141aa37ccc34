#!/usr/bin/env bash
# Attention decode on the device machine (run from the repo root after
# `scripts/device-prepare.sh build sm_90a` here, which builds the kernels of
# bench/attention_decode_shapes.txt into .devcarry/attn_decode/): the copy
# bandwidth and torch SDPA on the gathered contiguous cache in the same run,
# then every rocke kernel verified and timed over its paged cache; a summary
# gives each KV GB/s as % of the run's copy bandwidth. Logs go to $OUT (or ./out).
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}
mkdir -p "$OUT"
export ROCKE_DEVICE=cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 | tee "$OUT/gpu.txt"
# mixed batches: lengths drawn uniformly from 1..CTX (seed 14), one file per shape
grep -v '^#' bench/attention_decode_shapes.txt | while read -r name B Hq Hkv Sq ctx Dh page kind knobs; do
  [ "$kind" = mixed ] || continue
  python3 -c "import random; r = random.Random(14); print(' '.join(str(r.randint(1, $ctx)) for _ in range($B)))" \
    > "$OUT/$name.lengths"
done
echo "== peers (copy, torch SDPA)"
PYTHONUNBUFFERED=1 python3 bench/attention_decode_peers.py bench/attention_decode_shapes.txt "$OUT" \
  > "$OUT/decode_peers.jsonl" 2> "$OUT/decode_peers.err" || tail -5 "$OUT/decode_peers.err"
echo "== rocke attention decode"
: > "$OUT/rocke_decode.txt"
grep -v '^#' bench/attention_decode_shapes.txt | while read -r name B Hq Hkv Sq ctx Dh page kind knobs; do
  [ -n "$name" ] || continue
  m="$D/attn_decode/$name/manifest.json"
  lengths=equal
  [ "$kind" = mixed ] && lengths="$OUT/$name.lengths"
  echo "== $name" >> "$OUT/rocke_decode.txt"
  "$D/bin/rocke" run "$m" --shape "$B,$Hq,$Hkv,$Sq,$ctx,$Dh" --page-size "$page" --lengths "$lengths" --verify \
    --device cuda --warmup 20 --iters 100 >> "$OUT/rocke_decode.txt" 2>&1 || echo "FAILED $name" >> "$OUT/rocke_decode.txt"
done
# the PerfJSON lines, each tagged with its shape's name
awk '/^== /{n=$2} /^PerfJSON: /{sub(/^PerfJSON: \{/, "{\"name\": \"" n "\", \"impl\": \"rocke\", "); print}' \
  "$OUT/rocke_decode.txt" > "$OUT/rocke_decode.jsonl"
python3 - "$OUT/decode_peers.jsonl" "$OUT/rocke_decode.jsonl" <<'PY' | tee "$OUT/summary.txt"
import json, sys
rows = [json.loads(l) for f in sys.argv[1:] for l in open(f) if l.strip()]
copy = next((r["gbps"] for r in rows if r["name"] == "copy"), None)
print(f"copy bandwidth: {copy:.0f} GB/s" if copy else "copy bandwidth: missing")
for r in rows:
    if r["name"] == "copy" or "gbps" not in r:
        continue
    pct = f"{100 * r['gbps'] / copy:5.1f}% of copy" if copy else ""
    print(f"{r['name']:16s} {r['impl']:24s} {r['ms']:9.4f} ms {r['gbps']:8.0f} GB/s {pct}")
PY
