#!/usr/bin/env bash
# Attention forward on the device machine (run from the repo root after
# `scripts/device-prepare.sh build sm_90a` here, which builds the kernels of
# bench/attention_shapes.txt into .devcarry/attention/): torch SDPA in the
# same run, then every rocke kernel verified (the host reference samples
# rows at these sizes) and timed, then rocke / SDPA per shape. The issue's
# bars: the mma.sync path (rows -mma) >= 0.5x SDPA, path=wgmma (the plain
# rows: the heuristic's schedule=ws; -plain, -overlap, -pingpong: those schedules; -bn176, -bm192:
# FlashAttention-3's tiles; -xs: exact_softmax, the softmax before session 12; -fold: the folded one where
# the heuristic keeps the exact one) >= 1.1x; the layout=bshd and layout=varlen rows against SDPA on the
# same views / lengths.
# ATTN_SHAPES / ATTN_DIR: another shapes file and the folder its kernels were built into
# (bench/attention_grid_h200.sh prepare). Logs go to $OUT (or ./out).
set -uo pipefail
D=.devcarry
SHAPES=${ATTN_SHAPES:-bench/attention_shapes.txt}
KDIR=${ATTN_DIR:-$D/attention}
OUT=${OUT:-out}
mkdir -p "$OUT"
export ROCKE_DEVICE=cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 | tee "$OUT/gpu.txt"
echo "== torch SDPA"
PYTHONUNBUFFERED=1 python3 bench/peers_attention.py "$SHAPES" > "$OUT/attention_peers.jsonl" \
  2> "$OUT/attention_peers.err" || tail -5 "$OUT/attention_peers.err"
echo "== rocke attention"
: > "$OUT/rocke_attention.txt"
grep -v '^#' "$SHAPES" | while read -r name B Hq Hkv Sq Skv Dh mask knobs; do
  [ -n "$name" ] || continue
  [[ $name =~ ${ATTN_ROWS:-.} ]] || continue   # ATTN_ROWS: a regex of the row names to run
  m="$KDIR/$name/manifest.json"
  echo "== $name" >> "$OUT/rocke_attention.txt"
  lens=()   # varlen rows: lengths=L1/L2/... -> --lengths L1,L2,...
  for kv in ${knobs//,/ }; do [ "${kv%%=*}" = lengths ] && lens=(--lengths "$(echo "${kv#*=}" | tr / ,)"); done
  # a timeout per kernel: the wgmma kernels have not run on a GPU before, a hang costs one row
  timeout 60 "$D/bin/rocke" run "$m" --shape "$B,$Hq,$Hkv,$Sq,$Skv,$Dh" "${lens[@]}" --verify --device cuda \
    --warmup 10 --iters 50 >> "$OUT/rocke_attention.txt" 2>&1 || echo "FAILED($?) $name" >> "$OUT/rocke_attention.txt"
done
awk '/^== /{n=$2} /^PerfJSON: /{sub(/^PerfJSON: \{/, "{\"name\": \"" n "\", "); print}' "$OUT/rocke_attention.txt" \
  > "$OUT/rocke_attention.jsonl"
python3 - "$OUT/attention_peers.jsonl" "$OUT/rocke_attention.jsonl" <<'PY'
import json, sys
peer = {j["name"]: j for j in map(json.loads, open(sys.argv[1])) if "name" in j}
print("%-24s %12s %12s %8s %s" % ("shape", "rocke TF/s", "SDPA TF/s", "ratio", "verify bad"))
for line in open(sys.argv[2]):
    r = json.loads(line)
    p = peer.get(r["name"])
    ratio = r["tflops"] / p["tflops"] if p and p["tflops"] else float("nan")
    print("%-24s %12.1f %12.1f %8.2f %s" % (r["name"], r["tflops"], p["tflops"] if p else float("nan"), ratio,
                                            r.get("bad_count")))
PY
