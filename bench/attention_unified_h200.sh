#!/usr/bin/env bash
# Unified attention on the device machine (run from the repo root after
# `scripts/device-prepare.sh build sm_90a` here, which builds the kernels of
# bench/attention_unified_shapes.txt into .devcarry/attn_unified/ and the
# prefill (varlen) and decode kernels of the earlier issues for the mixed
# batch's parts into .devcarry/attn_unified_parts/): per batch the torch
# peers (bench/attention_unified_peers.py: SDPA per sequence on the gathered
# cache, FlexAttention with a paged block mask), then rocke's one launch,
# verified and timed, and for the mixed batches the prefill and decode
# kernels back to back on the same work. Logs go to $OUT (or ./out).
# `bench/attention_unified_h200.sh prepare` (here, instead of the whole device-prepare) builds only
# these kernels and the CLI into .devcarry/, without their .ir / .ll (the carry stays small).
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}
# UNIFIED_SHAPES: another batch list (default bench/attention_unified_shapes.txt); UNIFIED_DIR: where its
# kernels are (default .devcarry/attn_unified; another build of the same batches runs beside it for A/B)
SHAPES=${UNIFIED_SHAPES:-bench/attention_unified_shapes.txt}
KDIR=${UNIFIED_DIR:-$D/attn_unified}
if [ "${1:-}" = prepare ]; then
  B=${BUILD:-build}
  rm -rf "$KDIR" "$D/attn_unified_parts"
  mkdir -p "$D/bin" "$KDIR" "$D/attn_unified_parts"
  cp "$B/rocke" "$D/bin/"
  grep -v '^#' "$SHAPES" | while read -r name Hq Hkv Dh page batch knobs; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086
    "$B/rocke" build attention --mode unified --dtype bf16 --head-dim "$Dh" --page-size "$page" $knobs \
      --target sm_90a --shape "1,$Hq,$Hkv,1,1,$Dh" -o "$KDIR/$name" >/dev/null || echo "build failed: $name"
  done
  "$B/rocke" build attention --dtype bf16 --head-dim 128 --mask causal --layout varlen --target sm_90a \
    --shape 4,32,8,512,4096,128 -o "$D/attn_unified_parts/prefill" >/dev/null || echo "build failed: prefill"
  "$B/rocke" build attention --mode decode --dtype bf16 --head-dim 128 --page-size 16 --target sm_90a \
    --shape 124,32,8,1,16384,128 -o "$D/attn_unified_parts/decode" >/dev/null || echo "build failed: decode"
  find "$KDIR" "$D/attn_unified_parts" \( -name '*.ll' -o -name '*.ir' \) -delete
  du -sh "$D"
  exit 0
fi
mkdir -p "$OUT"
export ROCKE_DEVICE=cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 | tee "$OUT/gpu.txt"
# the batches' lengths, one Q:K,... line per shape (seed 25)
grep -v '^#' "$SHAPES" | while read -r name Hq Hkv Dh page batch knobs; do
  [ -n "$name" ] || continue
  python3 - "$batch" > "$OUT/$name.lengths" <<'PY'
import random, sys
r = random.Random(25)
kind = sys.argv[1]
if kind == "mixed":
    pairs = [(512, 4096)] * 4 + [(1, r.randint(1, 16384)) for _ in range(124)]
elif kind == "decode":
    pairs = [(1, r.randint(1, 8192)) for _ in range(256)]
elif kind == "few":
    pairs = [(1, 32768)] * 8
else:
    pairs = [(8192, 8192)]
print(",".join(f"{q}:{k}" for q, k in pairs))
PY
done
# UNIFIED_PEERS=0 skips the peers (torch.compile of FlexAttention can take a whole call: run them in
# their own call and keep their jsonl), UNIFIED_ROWS (a regex on NAME) runs some batches only
if [ "${UNIFIED_PEERS:-1}" = 1 ]; then
  echo "== peers (torch SDPA per sequence, FlexAttention paged)"
  PYTHONUNBUFFERED=1 python3 bench/attention_unified_peers.py "$SHAPES" "$OUT" \
    > "$OUT/unified_peers.jsonl" 2> "$OUT/unified_peers.err" || tail -5 "$OUT/unified_peers.err"
else
  : > "$OUT/unified_peers.jsonl"
fi
echo "== rocke unified attention"
: > "$OUT/rocke_unified.txt"
grep -v '^#' "$SHAPES" | while read -r name Hq Hkv Dh page batch knobs; do
  [ -n "$name" ] || continue
  [[ "$name" =~ ${UNIFIED_ROWS:-.} ]] || continue
  echo "== $name" >> "$OUT/rocke_unified.txt"
  "$D/bin/rocke" run "$KDIR/$name/manifest.json" --shape "$Hq,$Hkv,$Dh" --page-size "$page" \
    --lengths "$(cat "$OUT/$name.lengths")" --verify --device cuda --warmup 20 --iters 100 \
    >> "$OUT/rocke_unified.txt" 2>&1 || echo "FAILED $name" >> "$OUT/rocke_unified.txt"
done
# The split count forced (--arg num_splits=N, N in UNIFIED_SPLITS, default "2 4 8") on the rows of
# UNIFIED_SPLITS_ROWS (a regex, default ^mixed-p16$), logged as NAME@sN: the mixed batch's 2016 (query
# block, KV head) pairs fill the 132 SMs, so the choice stays 2-D (1 split) and each 16k-key decode is one
# block; the grid runs x (sequences: prefills, then decodes) fastest and KV heads slowest, so the last
# head's long decodes start late. If the forced splits beat 1 split here, that tail is the cost.
if [ -n "${UNIFIED_SPLITS-2 4 8}" ]; then
  grep -v '^#' "$SHAPES" | while read -r name Hq Hkv Dh page batch knobs; do
    [ -n "$name" ] || continue
    [[ "$name" =~ ${UNIFIED_SPLITS_ROWS:-^mixed-p16$} ]] || continue
    for n in ${UNIFIED_SPLITS-2 4 8}; do
      echo "== $name@s$n" >> "$OUT/rocke_unified.txt"
      "$D/bin/rocke" run "$KDIR/$name/manifest.json" --shape "$Hq,$Hkv,$Dh" --page-size "$page" \
        --lengths "$(cat "$OUT/$name.lengths")" --arg num_splits="$n" --verify --device cuda --warmup 20 \
        --iters 100 >> "$OUT/rocke_unified.txt" 2>&1 || echo "FAILED $name@s$n" >> "$OUT/rocke_unified.txt"
    done
  done
fi
# the mixed batch's parts with the earlier kernels: 4 x 512 causal over 4096 keys (prefill, varlen,
# contiguous) and the 124 decodes (paged, page 16): their times added give the back-to-back baseline
echo "== parts (prefill + decode kernels)"
: > "$OUT/rocke_parts.txt"
if [ -d "$D/attn_unified_parts" ] && [ "${UNIFIED_PARTS:-1}" = 1 ]; then   # UNIFIED_PARTS=0 skips them
  tr ',' '\n' < "$OUT/mixed-p16.lengths" | awk -F: '$1 == 1 {print $2}' > "$OUT/mixed-decode.lengths"
  echo "== parts-prefill" >> "$OUT/rocke_parts.txt"
  "$D/bin/rocke" run "$D/attn_unified_parts/prefill/manifest.json" --shape 4,32,8,512,4096,128 \
    --lengths 512:4096,512:4096,512:4096,512:4096 --verify --device cuda --warmup 20 --iters 100 \
    >> "$OUT/rocke_parts.txt" 2>&1 || echo "FAILED parts-prefill" >> "$OUT/rocke_parts.txt"
  echo "== parts-decode" >> "$OUT/rocke_parts.txt"
  "$D/bin/rocke" run "$D/attn_unified_parts/decode/manifest.json" --shape 124,32,8,1,16384,128 --page-size 16 \
    --lengths "$OUT/mixed-decode.lengths" --verify --device cuda --warmup 20 --iters 100 \
    >> "$OUT/rocke_parts.txt" 2>&1 || echo "FAILED parts-decode" >> "$OUT/rocke_parts.txt"
fi
awk '/^== /{n=$2} /^PerfJSON: /{sub(/^PerfJSON: \{/, "{\"name\": \"" n "\", \"impl\": \"rocke\", "); print}' \
  "$OUT/rocke_unified.txt" "$OUT/rocke_parts.txt" > "$OUT/rocke_unified.jsonl"
grep -h '^== \|^unified:' "$OUT/rocke_unified.txt" > "$OUT/rocke_paths.txt" || true
python3 - "$OUT/unified_peers.jsonl" "$OUT/rocke_unified.jsonl" <<'PY' | tee "$OUT/summary.txt"
import json, sys
rows = [json.loads(l) for f in sys.argv[1:] for l in open(f) if l.strip().startswith("{")]
by = {}
for r in rows:
    by.setdefault(r["name"], []).append(r)
for r in rows:
    if r["name"] == "gpu":
        continue
    if "ms" not in r:
        print(f"{r['name']:16s} {r.get('impl', '?'):28s} {r.get('error', 'no time')}")
        continue
    tf = f"{r['tflops']:7.1f} TFLOP/s" if r.get("tflops") else ""
    gb = f"{r['gbps']:7.0f} GB/s KV" if r.get("gbps") else ""
    print(f"{r['name']:16s} {r['impl']:28s} {r['ms']:9.4f} ms {tf} {gb}")
parts = [r["ms"] for n in ("parts-prefill", "parts-decode") for r in by.get(n, []) if "ms" in r]
one = [r["ms"] for r in by.get("mixed-p16", []) if r.get("impl") == "rocke" and "ms" in r]
if len(parts) == 2 and one:
    print(f"mixed-p16: one launch {one[0]:.4f} ms vs prefill + decode back to back {sum(parts):.4f} ms "
          f"({sum(parts) / one[0]:.2f}x)")
# the row variants: the per-batch pick (NAME) against each locked variant (NAME-bm64, NAME-bm16)
# (-mma: the full blocks on mma.sync instead of wgmma; -whole: the wgmma build's whole-keys kernel alone)
for base in ("mixed-p16", "decode-p16", "decode-g8-p16", "prefill-p16"):
    t = {n: r["ms"] for n in (base, base + "-bm64", base + "-bm16", base + "-s3", base + "-mma", base + "-whole",
                              base + "-ro")
         for r in by.get(n, []) if r.get("impl") == "rocke" and "ms" in r}
    if base in t and len(t) > 1:
        print(f"{base}: rows pick {t[base]:.4f} ms; " +
              ", ".join(f"{n[len(base) + 1:]} {ms:.4f} ms" for n, ms in t.items() if n != base))
# the full blocks' body: wgmma (the default on sm_90a) against mma.sync on the same batch
for base in ("mixed-p16", "decode-p16", "prefill-p16"):
    wg = [r["ms"] for r in by.get(base, []) if r.get("impl") == "rocke" and "ms" in r]
    mm = [r["ms"] for r in by.get(base + "-mma", []) if r.get("impl") == "rocke" and "ms" in r]
    if wg and mm:
        print(f"{base}: full blocks on wgmma {wg[0]:.4f} ms vs mma.sync {mm[0]:.4f} ms ({mm[0] / wg[0]:.2f}x)")
# the forced split counts (NAME@sN) against the chosen one
for base in sorted({r["name"].split("@")[0] for r in rows if "@s" in r["name"]}):
    t = {n: r["ms"] for n in [base] + sorted(k for k in by if k.startswith(base + "@s"))
         for r in by.get(n, []) if r.get("impl") == "rocke" and "ms" in r}
    if base in t and len(t) > 1:
        print(f"{base}: chosen splits {t[base]:.4f} ms; " +
              ", ".join(f"num_splits={n.split('@s')[1]} {ms:.4f} ms" for n, ms in t.items() if n != base))
flex = [r["ms"] for r in by.get("mixed-p16", []) if r.get("impl", "").startswith("flex") and "ms" in r]
if flex and one:
    print(f"mixed-p16: FlexAttention paged / rocke = {flex[0] / one[0]:.2f}x (the issue asks >= 2x)")
PY
