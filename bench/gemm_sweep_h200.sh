#!/usr/bin/env bash
# The Hopper GEMM's knobs swept on the H200 (issues 12 and 23), in two steps because the
# GPU machine has no LLVM:
#   bench/gemm_sweep_h200.sh prepare [ROCKE] [TARGET]   here: every config compiled into
#       .devcarry/gemm_sweep/*/kernels (--build-only)
#   bench/gemm_sweep_h200.sh run                         on the device, from the repo root:
#       the same commands measure them, then the best configs per shape, next to torch.matmul
#       timed in the same run (bench/peers_gemm.py).
# The space: block tile, stages, schedule and grouped-M order of path=wgmma at the square
# anchors and the 6144x5120x3072 shape; the heuristic's own pick is run too (--with-heuristic).
set -uo pipefail
mode=${1:-}
D=.devcarry/gemm_sweep
case "$mode" in
  prepare) ROCKE=${2:-build/rocke}; T=${3:-sm_90a}; extra=(--build-only); mkdir -p "$D"; echo "$T" > "$D/target" ;;
  run) ROCKE=${ROCKE:-.devcarry/bin/rocke}; T=$(cat "$D/target"); extra=(--devices all --warmup 20 --iters 100)
       OUT=${OUT:-out/gemm-sweep}; mkdir -p "$OUT"; export ROCKE_DEVICE=cuda ;;
  *) echo "usage: $0 prepare [ROCKE] [TARGET] | run" >&2; exit 2 ;;
esac
KNOBS=(--knob path=wgmma --knob tile=128x256x64,256x128x64,128x128x64,128x192x64
       --knob stages=3,4,5 --knob schedule=plain,persistent,pingpong --knob group_m=8,16)
# SWEEP_SHAPES: the shapes to run (all three by default; a call can split them)
for shape in ${SWEEP_SHAPES:-4096,4096,4096 8192,8192,8192 6144,5120,3072}; do
  name=rc-bf16@$shape
  echo "== sweep gemm $name ($mode)"
  "$ROCKE" sweep gemm --target "$T" --dtype bf16 --knob layout=rc --shapes "$shape" "${KNOBS[@]}" \
    --with-heuristic "${extra[@]}" -q -o "$D/$name" 2>&1 | tail -2
  # each shape's records into $OUT at once: a call that ends at its time limit keeps what was measured
  [ "$mode" = run ] && cp "$D/$name/results.jsonl" "$OUT/$name.jsonl" 2>/dev/null
done
[ "$mode" = prepare ] && exit 0
printf '4096 4096 4096 rc bf16\n8192 8192 8192 rc bf16\n6144 5120 3072 rc bf16\n' > "$OUT/shapes.txt"
timeout 120 env PYTHONUNBUFFERED=1 python3 bench/peers_gemm.py "$OUT/shapes.txt" > "$OUT/peers.jsonl" \
  2> "$OUT/peers.err" || tail -3 "$OUT/peers.err"
for d in "$D"/*/; do cp "$d/results.jsonl" "$OUT/$(basename "$d").jsonl" 2>/dev/null; done
python3 - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import glob, json, os, sys
out = sys.argv[1]
peers = {}
for l in open(os.path.join(out, "peers.jsonl")):
    if l.strip():
        r = json.loads(l)
        peers[r.get("shape") and ",".join(map(str, r["shape"])) or r.get("name")] = r
for f in sorted(glob.glob(os.path.join(out, "rc-bf16@*.jsonl"))):
    rows = [json.loads(l) for l in open(f) if l.strip()]
    ok = [r for r in rows if r.get("verified", True) and not r.get("bad_count") and r.get("tflops")]
    ok.sort(key=lambda r: -r["tflops"])
    shape = os.path.basename(f)[len("rc-bf16@"):-len(".jsonl")]
    print("== %s: %d configs measured, %d failed or unverified" % (shape, len(ok), len(rows) - len(ok)))
    heur = [r for r in ok if str(r.get("key", "")).startswith("heuristic")]
    for r in ok[:6] + heur:
        print("  %7.1f TFLOP/s  %s" % (r["tflops"], r.get("key") or r.get("kernel")))
print("== torch.matmul in the same run")
for k, r in peers.items():
    print("  %s %s" % (k, json.dumps(r)))
PY
