#!/usr/bin/env bash
# Issue 15 on the H200: the row families and transpose at odd, prime, short and
# long rows, against torch and Triton in the same run. Two steps (the GPU
# machine has no LLVM):
#   bench/rows_h200.sh prepare [ROCKE] [TARGET] [OLD_ROCKE]   here: kernels into
#       .devcarry/rows/ops/NAME@SHAPE (and .devcarry/rows/any: built without a
#       shape), the CLI into .devcarry/bin/rocke. OLD_ROCKE (optional): another
#       build's CLI; its heuristic picks go in as NAME-old@SHAPE, so the two
#       builds' kernels are timed in one run
#   bench/rows_h200.sh run                                     on the device, from
#       the repo root with .devcarry carried: the peers (copy, torch, Triton) at
#       every shape, then every kernel whose NAME@SHAPE matches $OPS_ROWS (a regex,
#       default all) verified and timed, then one line per kernel: GB/s, torch,
#       Triton, copy, % of copy, bad=
# Rows (docs/kernels.md, "Filled rows"):
#   NAME         the heuristic's pick for the shape
#   NAME-prev    the pick before filled rows (512 x 2 at 4097, 256 x 2 at 2047, ...)
#   NAME-span / NAME-direct   LayerNorm's two stages at 2047 and 4097
#   transpose-tmAxtnBbC       other tiles (wave quantization at 4097 x 4097: 4225
#                             tiles of 64 x 64 over 1056 resident blocks)
#   transpose-nfast           the tiles along N (the order before m_fast) where the pick walks down M
#   NAME-any     the shape-variant manifest (built without --shape) at $ANY_SHAPES
#   NAME-f32[-any]  f32 at the issue grid $FGRID (and the f32 shape-variant manifest)
#   NAME-s9      8192 x 5000 at 256 x 3 (the pick before "fuller at half the threads", now 128 x 5)
#   transpose[-f32]-nfast  m_fast false at every transpose shape
#   softmax-c1-any  the same with --chunks 1 (classes end at the row capacity 8192)
#   NAME-direct-any the shape-variant manifest with --stage direct (direct rows at every length;
#                   what NAME-any is now too), beside NAME-auto-any (--stage auto: auto classes)
#   NAME-s10     softmax / rmsnorm 1000 x 3001 at 128 x 3 and $FEW at 128 x 5 (the picks
#                before "few rows keep the device's threads", now 256 x 2 and 512 x 2)
#   add_rmsnorm_quant[-looped]  the fused add + RMSNorm + fp8 quantization at $QGRID: the
#                cached pick (h in registers) and the three looped passes it replaces
#                (--chunks 0); its torch peer is bench/peers_small_ops.py's FUSED_SHAPES
#   topk_softmax[-looped]  MoE routing at $TKGRID (tokens,experts,k): the cached logits
#                (the pick) and the passes that read the row again (--chunks 0); torch peer
#                as above (no copy column: its shape is not a matrix the peers copy)
# About 180 kernels, 2-10 s of host verification each: split them over calls with OPS_ROWS
# (e.g. '^softmax', '^rmsnorm', '^(sum|layernorm)', '^transpose': 40-60 kernels a call);
# the peers (bf16 and f32, PEERS_DTYPES) run in each.
# PEER_SHAPES (default: every shape the kernels run at) limits the peers' shapes.
# Session 11's changes in three calls of about 1.5-3 min each (12-32 kernel runs, 2-5 s of
# host verification each, peers 30-60 s):
#   OPS_ROWS='^(softmax|rmsnorm)(-direct)?-any@65536,(127|255|1000|1001)$|^(softmax|rmsnorm)(-s10)?@(1000,3001|1,4097|500,4097)$|^(softmax|rmsnorm)@65536,(127|1000)$' \
#     PEER_SHAPES='65536,127 65536,255 65536,1000 65536,1001 1000,3001 1,4097 500,4097' PEERS_DTYPES=bf16 bash bench/rows_h200.sh run
#   OPS_ROWS='^(layernorm|sum)(-direct)?-any@65536,(127|255|1000|1001)$|^(layernorm|sum)@65536,(127|1000)$' \
#     PEER_SHAPES='65536,127 65536,255 65536,1000 65536,1001' PEERS_DTYPES=bf16 bash bench/rows_h200.sh run
#   OPS_ROWS='^(add_rmsnorm_quant|topk_softmax)' PEER_SHAPES='32768,4096 4096,8192 4096,5120' \
#     PEERS_DTYPES=bf16 bash bench/rows_h200.sh run
# Logs go to $OUT (or ./out/rows-h200).
set -uo pipefail
mode=${1:-}
D=.devcarry/rows
GRID="16384,2047 4096,4097 8192,5000 1000,3001 1024,50257 65536,127 1000,151936 65536,1000 4096,4096 64,1000003"
TGRID="4097,4097 1000,32000 1000,151936 16384,2047 1024,50257 4096,4096 1000,3001 8192,5000 65536,127 64,1000003"
# issue 15's grid, also in f32 (every row family and transpose)
FGRID="1000,3001 8192,5000 4096,4097 16384,2047 65536,127 64,1000003"
# add_rmsnorm_quant (bf16 -> fp8 e4m3), also in bench/peers_small_ops.py FUSED_SHAPES
QGRID="32768,4096 4096,8192 4096,5120"
# few rows of 4097 (the few-rows rule: 512 x 2 where 128 x 5 was picked)
FEW="1,4097 500,4097"
# topk_softmax (bf16 logits, renormalised), also in FUSED_SHAPES
TKGRID="16384,128,8 16384,64,2 4096,256,8"
# where the shape-variant manifests run (auto classes: odd and aligned short rows)
ANY_SHAPES=${ANY_SHAPES:-16384,2047 4096,4097 8192,5000 65536,127 65536,255 65536,1000 65536,1001 1000,3001 64,1000003 1024,50257}

prepare() {
  local R=${1:-build/rocke} T=${2:-sm_90a} OLD=${3:-}
  rm -rf "$D"
  mkdir -p "$D/ops" "$D/any" .devcarry/bin
  cp "$R" .devcarry/bin/rocke
  b() {   # NAME SHAPE SPEC... with the CLI in $CLI
    local name=$1 shape=$2; shift 2
    "$CLI" build "$@" --target "$T" --shape "$shape" -o "$D/ops/$name@$shape" >/dev/null \
      || echo "prepare: $name@$shape did not build" >&2
  }
  CLI=$R
  for shape in $GRID; do
    b softmax "$shape" softmax --dtype bf16
    b layernorm "$shape" layernorm --dtype bf16
    b rmsnorm "$shape" rmsnorm --dtype bf16
    b sum "$shape" reduce --op sum --dtype bf16
  done
  for shape in $TGRID; do b transpose "$shape" transpose --dtype bf16; done
  # the previous heuristic's geometry at the shapes filled rows change
  while read -r shape knobs; do
    for f in softmax layernorm rmsnorm; do
      b "$f-prev" "$shape" $f --dtype bf16 --stage direct $knobs
    done
  done <<'PREV'
4096,4097 --block_size 512 --rows_per_block 1 --chunks 2
16384,2047 --block_size 256 --rows_per_block 1 --chunks 2
8192,5000 --block_size 512 --rows_per_block 1 --chunks 2
1000,3001 --block_size 256 --rows_per_block 1 --chunks 2
PREV
  for shape in 16384,2047 4096,4097; do
    b layernorm-span "$shape" layernorm --dtype bf16 --stage span
    b layernorm-direct "$shape" layernorm --dtype bf16 --stage direct
  done
  for shape in 16384,2047 4096,4097; do b softmax-f16 "$shape" softmax --dtype f16; done
  for shape in $QGRID; do
    b add_rmsnorm_quant "$shape" add_rmsnorm_quant --dtype bf16
    b add_rmsnorm_quant-looped "$shape" add_rmsnorm_quant --dtype bf16 --chunks 0
  done
  for shape in $TKGRID; do
    b topk_softmax "$shape" topk_softmax --dtype bf16
    b topk_softmax-looped "$shape" topk_softmax --dtype bf16 --chunks 0
  done
  # 1000 x 3001 before few rows kept their threads (128 x 3; now 256 x 2)
  for f in softmax rmsnorm; do
    b "$f-s10" 1000,3001 $f --dtype bf16 --stage direct --block_size 128 --rows_per_block 1 --chunks 3
    for shape in $FEW; do
      b "$f" "$shape" $f --dtype bf16
      b "$f-s10" "$shape" $f --dtype bf16 --stage direct --block_size 128 --rows_per_block 1 --chunks 5
    done
  done
  for shape in $FGRID; do
    b softmax-f32 "$shape" softmax --dtype f32
    b layernorm-f32 "$shape" layernorm --dtype f32
    b rmsnorm-f32 "$shape" rmsnorm --dtype f32
    b sum-f32 "$shape" reduce --op sum --dtype f32
    b transpose-f32 "$shape" transpose --dtype f32
  done
  # 8192 x 5000 before "fuller at half the threads" (256 x 3; now 128 x 5)
  for f in softmax layernorm rmsnorm; do
    b "$f-s9" 8192,5000 $f --dtype bf16 --stage direct --block_size 256 --rows_per_block 1 --chunks 3
  done
  while read -r shape knobs; do
    b "transpose-$(echo "$knobs" | awk '{print "tm" $2 "xtn" $4 "b" $6}')" "$shape" transpose --dtype bf16 $knobs
  done <<'TILES'
4097,4097 --tile_m 32 --tile_n 64 --block_size 128
4097,4097 --tile_m 64 --tile_n 128 --block_size 256
4097,4097 --tile_m 128 --tile_n 64 --block_size 256
1000,32000 --tile_m 32 --tile_n 64 --block_size 128
1000,32000 --tile_m 128 --tile_n 64 --block_size 256
1000,32000 --tile_m 32 --tile_n 128 --block_size 256
TILES
  for shape in $TGRID; do b transpose-nfast "$shape" transpose --dtype bf16 --m_fast false; done
  for shape in $FGRID; do b transpose-f32-nfast "$shape" transpose --dtype f32 --m_fast false; done
  for f in "softmax softmax" "layernorm layernorm" "rmsnorm rmsnorm" "sum reduce --op sum"; do
    set -- $f
    local name=$1; shift
    "$R" build "$@" --dtype bf16 --target "$T" -o "$D/any/$name" >/dev/null || echo "prepare: $name-any" >&2
    "$R" build "$@" --dtype f32 --target "$T" -o "$D/any/$name-f32" >/dev/null || echo "prepare: $name-f32-any" >&2
    # the variants with direct rows only, and with the auto classes (asked for: session 11 measured them
    # slower at odd lengths)
    "$R" build "$@" --dtype bf16 --stage direct --target "$T" -o "$D/any/$name-direct" >/dev/null \
      || echo "prepare: $name-direct-any" >&2
    "$R" build "$@" --dtype bf16 --stage auto --target "$T" -o "$D/any/$name-auto" >/dev/null \
      || echo "prepare: $name-auto-any" >&2
  done
  # chunks locked: the cached classes end at 1024 x 8 x 1 = 8192 (4096,4097 and 8192,5000 take t1024c1)
  "$R" build softmax --dtype bf16 --chunks 1 --target "$T" -o "$D/any/softmax-c1" >/dev/null \
    || echo "prepare: softmax-c1-any" >&2
  if [ -n "$OLD" ]; then
    CLI=$OLD
    for shape in 16384,2047 4096,4097 8192,5000 1000,3001 65536,1000 65536,1001 1024,50257 64,1000003; do
      b softmax-old "$shape" softmax --dtype bf16
      b layernorm-old "$shape" layernorm --dtype bf16
      b rmsnorm-old "$shape" rmsnorm --dtype bf16
    done
    for shape in 4097,4097 1000,32000 1000,151936; do b transpose-old "$shape" transpose --dtype bf16; done
    # the old CLI's shape-less manifests, run as NAME-old-any
    for f in "softmax softmax" "layernorm layernorm" "rmsnorm rmsnorm" "sum reduce --op sum"; do
      set -- $f
      local name=$1; shift
      "$OLD" build "$@" --dtype bf16 --target "$T" -o "$D/any/$name-old" >/dev/null || echo "prepare: $name-old-any" >&2
    done
  fi
  echo "$T" > "$D/target"
  # the device runs the code objects: the IR, LLVM IR and PTX stay here (a few MiB carried, not ~50)
  find "$D" \( -name '*.ll' -o -name '*.ir' -o -name '*.ptx' \) -delete
  du -sh "$D" .devcarry/bin/rocke
}

run() {
  OUT=${OUT:-out/rows-h200}
  mkdir -p "$OUT"
  export ROCKE_DEVICE=cuda
  local ROWS=${OPS_ROWS:-.} CLI=.devcarry/bin/rocke
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 | tee "$OUT/gpu.txt"
  local shapes
  shapes=${PEER_SHAPES:-$(echo $GRID $TGRID $ANY_SHAPES $QGRID $FEW | tr ' ' '\n' | sort -u | tr '\n' ' ')}
  echo "== peers at $shapes"
  PEERS_DTYPES=${PEERS_DTYPES:-bf16 f32} timeout ${PEERS_TIMEOUT:-300} python3 bench/peers_small_ops.py $shapes > "$OUT/peers.jsonl" 2> "$OUT/peers.err" \
    || tail -3 "$OUT/peers.err"
  : > "$OUT/rocke_ops.txt"
  one() {   # NAME SHAPE MANIFEST
    [[ "$1@$2" =~ $ROWS ]] || return 0
    echo "== $1 $2" >> "$OUT/rocke_ops.txt"
    timeout ${RUN_TIMEOUT:-40} "$CLI" run "$3" --shape "$2" --verify --device cuda --warmup 20 --iters 100 \
      >> "$OUT/rocke_ops.txt" 2>&1 || echo "FAILED $1 $2" >> "$OUT/rocke_ops.txt"
  }
  for m in "$D"/ops/*/manifest.json; do
    [ -e "$m" ] || continue
    local dir
    dir=$(basename "$(dirname "$m")")
    one "${dir%@*}" "${dir#*@}" "$m"
  done
  for m in "$D"/any/*/manifest.json; do
    [ -e "$m" ] || continue
    for shape in $ANY_SHAPES; do
      one "$(basename "$(dirname "$m")")-any" "$shape" "$m"
    done
  done
  python3 - "$OUT/peers.jsonl" "$OUT/rocke_ops.txt" <<'PY' | tee "$OUT/summary.txt"
import json, re, sys
peers = {}
for line in open(sys.argv[1]):
    if line.startswith("{"):
        r = json.loads(line)
        peers[(r["op"], r["shape"], r["impl"], r.get("dtype", "bf16"))] = r["gbps"]
cur, rows = None, []
for line in open(sys.argv[2]):
    m = re.match(r"== (\S+) (\S+)", line)
    if m:
        cur = [m.group(1), m.group(2), None, "", "-"]
        rows.append(cur)
    elif cur and line.startswith("PerfJSON:"):
        r = json.loads(line[len("PerfJSON:"):])
        cur[2], cur[3] = r, r["kernel"]
    elif cur and line.startswith("verify"):
        cur[4] = line.split("bad=")[-1].split()[0] if "bad=" in line else line.strip()
    elif cur and line.startswith("FAILED"):
        cur[4] = "FAILED"
f = lambda v: f"{v:6.0f}" if v else "     -"
print(f"{'kernel':24} {'shape':12} {'GB/s':>6} {'torch':>6} {'triton':>6} {'copy':>6} {'of copy':>8}  bad      name")
for name, shape, r, kern, bad in rows:
    s = shape.replace(",", "x")
    base = name.split("-")[0]
    dt = next((d for d in ("f32", "f16") if f"-{d}" in name), "bf16")
    copy = peers.get(("copy", s, "torch", dt))
    g = r["gbps"] if r else None
    pct = f"{100 * g / copy:7.1f}%" if g and copy else "       -"
    print(f"{name:24} {shape:12} {f(g)} {f(peers.get((base, s, 'torch', dt)))} {f(peers.get((base, s, 'triton', dt)))} "
          f"{f(copy)} {pct}  bad={bad:6} {kern[-52:]}")
PY
}

case "$mode" in
  prepare) shift; prepare "$@" ;;
  run) run ;;
  *) echo "usage: $0 prepare [ROCKE] [TARGET] [OLD_ROCKE] | run" >&2; exit 2 ;;
esac
