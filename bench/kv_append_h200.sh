#!/usr/bin/env bash
# kv_append on the device machine (run from the repo root after
# `scripts/device-prepare.sh build sm_90a` here, which builds the kernels of
# bench/kv_append_shapes.txt into .devcarry/kv_append/): the copy bandwidth
# and torch's index_copy_ peer in the same run, then every rocke kernel
# verified and timed; a summary gives each GB/s as % of the run's copy
# bandwidth. Logs go to $OUT (or ./out). Not yet run on a device.
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}
mkdir -p "$OUT"
export ROCKE_DEVICE=cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 | tee "$OUT/gpu.txt"
echo "== peers (copy, torch index_copy_)"
PYTHONUNBUFFERED=1 python3 bench/kv_append_peers.py bench/kv_append_shapes.txt \
  > "$OUT/kv_append_peers.jsonl" 2> "$OUT/kv_append_peers.err" || tail -5 "$OUT/kv_append_peers.err"
echo "== rocke kv_append"
: > "$OUT/rocke_kv_append.txt"
grep -v '^#' bench/kv_append_shapes.txt | while read -r name T Hq Hkv Dh pages psize rope kv; do
  [ -n "$name" ] || continue
  echo "== $name" >> "$OUT/rocke_kv_append.txt"
  "$D/bin/rocke" run "$D/kv_append/$name/manifest.json" --shape "$T,$Hq,$Hkv,$Dh,$pages,$psize" --verify \
    --device cuda --warmup 20 --iters 100 >> "$OUT/rocke_kv_append.txt" 2>&1 || echo "FAILED $name" >> "$OUT/rocke_kv_append.txt"
done
awk '/^== /{n=$2} /^PerfJSON: /{sub(/^PerfJSON: \{/, "{\"name\": \"" n "\", \"impl\": \"rocke\", "); print}' \
  "$OUT/rocke_kv_append.txt" > "$OUT/rocke_kv_append.jsonl"
python3 - "$OUT/kv_append_peers.jsonl" "$OUT/rocke_kv_append.jsonl" <<'PY' | tee "$OUT/summary.txt"
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
