#!/usr/bin/env bash
# GEMM at odd leading dimensions (bench/gemm_odd_shapes.txt) against cuBLAS (torch.matmul, same
# layouts) in the same run. Two steps:
#   bench/gemm_odd_h200.sh prepare   here: builds into .devcarry/gemm_odd/ (rocke + cubins, no .ll/.ir)
#     for every shape: the heuristic's pick (on sm_90a: pad=ab|a|b, the staged persistent TMA/wgmma
#     kernel, where the tiles fill the SMs; folder LAYOUT-DTYPE@M,N,K) and the gathered mma.sync
#     kernel it replaced (--path mma; folder LAYOUT-DTYPE-mma@M,N,K; GEMM_MMA=0 skips it). A row with
#     columns 6 and 7 (SUFFIX KNOBS) builds only that variant, LAYOUT-DTYPE-SUFFIX@M,N,K, with KNOBS
#     (name=value,...; - for none) over the heuristic's pick; SUFFIX old: OLD_CLI's pick (another build)
#   bench/gemm_odd_h200.sh run       on the GPU machine, from the repo root with .devcarry carried:
#     one line per kernel: folder, rocke TFLOP/s, cuBLAS TFLOP/s, ratio, verify bad=
# Logs go to $OUT (or ./out).
set -uo pipefail
D=.devcarry
G=${GEMM_DIR:-$D/gemm_odd}                        # run: another script's kernels (gemm_splitk_h200.sh)
SHAPES=${GEMM_SHAPES:-bench/gemm_odd_shapes.txt}
case "${1:-}" in
prepare)
  B=${BUILD:-build}
  rm -rf "$G"; mkdir -p "$D/bin" "$G"
  cp "$B/rocke" "$D/bin/"
  grep -v '^#' "$SHAPES" | while read -r M N K layout dtype suffix knobs; do
    [ -n "$M" ] || continue
    if [ -n "${suffix:-}" ]; then   # a variant row: knobs "tile=128x256x64,path=wgmma" over the heuristic's
      extra=() cli=$B/rocke
      [ "$suffix" = old ] && cli=${OLD_CLI:?a row with SUFFIX old needs OLD_CLI}
      for kv in ${knobs//,/ }; do [ "$kv" = - ] || extra+=("--${kv%%=*}" "${kv#*=}"); done
      "$cli" build gemm --layout "$layout" --dtype "$dtype" --target sm_90a --shape "$M,$N,$K" \
        "${extra[@]}" -o "$G/$layout-$dtype-$suffix@$M,$N,$K" > /dev/null || echo "build failed: $layout-$dtype-$suffix@$M,$N,$K"
      continue
    fi
    "$B/rocke" build gemm --layout "$layout" --dtype "$dtype" --target sm_90a --shape "$M,$N,$K" \
      -o "$G/$layout-$dtype@$M,$N,$K" > /dev/null || echo "build failed: $layout-$dtype@$M,$N,$K"
    [ "${GEMM_MMA:-1}" = 1 ] || continue
    "$B/rocke" build gemm --layout "$layout" --dtype "$dtype" --target sm_90a --shape "$M,$N,$K" --path mma \
      -o "$G/$layout-$dtype-mma@$M,$N,$K" > /dev/null || echo "build failed: $layout-$dtype-mma@$M,$N,$K"
  done
  find "$G" \( -name '*.ll' -o -name '*.ir' \) -delete
  for m in "$G"/*/manifest.json; do
    printf '%s %s\n' "$(basename "$(dirname "$m")")" "$(grep -o '"kernel_name": "[^"]*"' "$m" | cut -d'"' -f4)"
  done
  du -sh "$G"
  ;;
run)
  OUT=${OUT:-out}
  mkdir -p "$OUT"
  export ROCKE_DEVICE=cuda
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 | tee "$OUT/gpu.txt"
  timeout 150 env PYTHONUNBUFFERED=1 python3 bench/peers_gemm.py "$SHAPES" > "$OUT/peers.jsonl" \
    2> "$OUT/peers.err" || tail -3 "$OUT/peers.err"
  : > "$OUT/rocke.txt"
  for m in "$G"/*/manifest.json; do
    dir=$(basename "$(dirname "$m")")
    echo "== $dir" >> "$OUT/rocke.txt"
    # a timeout per kernel: a cooperative kernel that hangs costs one row
    timeout 60 "$D/bin/rocke" run "$m" --shape "${dir#*@}" --verify --device cuda --warmup 20 --iters 100 \
      >> "$OUT/rocke.txt" 2>&1 || echo "FAILED($?) $dir" >> "$OUT/rocke.txt"
  done
  awk '/^== /{n=$2} /^PerfJSON: /{sub(/^PerfJSON: \{/, "{\"name\": \"" n "\", "); print} /^FAILED/{print "{\"name\": \"" $2 "\", \"failed\": true}"}' \
    "$OUT/rocke.txt" > "$OUT/rocke.jsonl"
  python3 - "$OUT/peers.jsonl" "$OUT/rocke.jsonl" <<'PY'
import json, sys
peer = {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    if j.get("impl") == "torch.matmul":
        peer[(tuple(j["shape"]), j["layout"], j["dtype"])] = j["tflops"]
print("%-34s %11s %11s %7s %s" % ("kernel", "rocke TF/s", "cuBLAS TF/s", "ratio", "verify"))
for line in open(sys.argv[2]):
    j = json.loads(line)
    name = j["name"]
    head, shape = name.split("@")
    layout, dtype = head.split("-")[:2]
    key = (tuple(int(x) for x in shape.split(",")), layout, dtype)
    p = peer.get(key)
    if j.get("failed"):
        print("%-34s %11s %11s %7s FAILED" % (name, "-", "%.1f" % p if p else "-", "-"))
        continue
    r = j["tflops"]
    print("%-34s %11.1f %11s %7s bad=%d/%d" % (name, r, "%.1f" % p if p else "-",
                                               "%.2fx" % (r / p) if p else "-", j["bad_count"], j["total"]))
PY
  ;;
*)
  echo "usage: bench/gemm_odd_h200.sh prepare|run" >&2
  exit 2
  ;;
esac
