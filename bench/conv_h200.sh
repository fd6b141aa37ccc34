#!/usr/bin/env bash
# Convolutions on the device machine (run from the repo root after
# `scripts/device-prepare.sh build sm_90a` here, which builds the kernels of
# bench/conv_shapes.txt into .devcarry/conv/): torch/cuDNN (channels_last,
# bf16) in the same run, then every rocke kernel verified and timed, then the
# rocke / cuDNN ratio per shape and direction (and rocke's GB/s over a copy's,
# the ceiling of the depthwise forward). Each direction runs three times on sm_90a:
# the heuristic's kernel (fwd), and on each matrix path (fwd-mma, fwd-wgmma; the same for
# dgrad and wgrad), and wgrad-sk16 (the heuristic's wgrad at 16 splits, session 5's cap);
# depthwise rows add the direct kernel at other knobs (fwd-px1, -px2, -px8v4: dw_pix 8 with
# vec_a 4, -cv8: 8 channel vectors a block) and the small-group kernel it replaced (fwd-sg). 1x1
# shapes also run -copy in every direction (the threads-copy wgmma kernels the TMA ones replaced) and
# fwd/dgrad -plain and -ws (the GEMM's TMA kernel on its plain and ws schedules; the heuristic's is
# persistent).
# Logs go to $OUT (or ./out).
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}
mkdir -p "$OUT"
export ROCKE_DEVICE=cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 | tee "$OUT/gpu.txt"
echo "== torch conv (cuDNN)"
PYTHONUNBUFFERED=1 python3 bench/peers_conv.py bench/conv_shapes.txt > "$OUT/conv_peers.jsonl" 2> "$OUT/conv_peers.err" \
  || tail -5 "$OUT/conv_peers.err"
echo "== rocke conv"
: > "$OUT/rocke_conv.txt"
: > "$OUT/rocke_conv.jsonl"
grep -v '^#' bench/conv_shapes.txt | while read -r name n c h w k r s st pd g; do
  [ -n "$name" ] || continue
  [[ $name =~ ${CONV_ROWS:-.} ]] || continue   # CONV_ROWS: a regex of the shape names to run
  for dir in fwd fwd-mma fwd-wgmma fwd-px1 fwd-px2 fwd-px8v4 fwd-cv8 fwd-sg fwd-copy fwd-plain fwd-ws dgrad \
      dgrad-mma dgrad-wgmma dgrad-copy dgrad-plain dgrad-ws wgrad wgrad-mma wgrad-wgmma wgrad-copy wgrad-sk16; do
    m="$D/conv/$name-$dir/manifest.json"
    [ -f "$m" ] || continue   # -mma / -wgmma: sm_90a builds only (-wgmma: ungrouped shapes)
    echo "== $name $dir" >> "$OUT/rocke_conv.txt"
    timeout 45 "$D/bin/rocke" run "$m" --shape "$n,$c,$h,$w,$k,$r,$s" --stride "$st" --pad "$pd" --groups "$g" --verify \
      --device cuda --warmup 20 --iters 100 > "$OUT/last.txt" 2>&1 || echo "FAILED $name $dir" >> "$OUT/last.txt"
    cat "$OUT/last.txt" >> "$OUT/rocke_conv.txt"
    grep -h 'PerfJSON' "$OUT/last.txt" | sed "s/^PerfJSON: {/{\"name\": \"$name\", \"dir\": \"$dir\", /" \
      >> "$OUT/rocke_conv.jsonl"
  done
done
python3 - "$OUT/conv_peers.jsonl" "$OUT/rocke_conv.jsonl" <<'PY'
import json, sys
peer = {(r["name"], r["dir"]): r for r in map(json.loads, open(sys.argv[1])) if r}
print(f'{"shape":12} {"dir":6} {"rocke TF/s":>11} {"cuDNN TF/s":>11} {"ratio":>6} {"GB/s / copy":>12}')
for r in map(json.loads, open(sys.argv[2])):
    p = peer.get((r["name"], r["dir"].split("-")[0]))   # fwd-mma, wgrad-wgmma, ...: against cuDNN's fwd, wgrad
    cp = peer.get((r["name"], "copy"))
    ratio = r["tflops"] / p["tflops"] if p and p["tflops"] else float("nan")
    bw = r["gbps"] / cp["gbps"] if cp and cp["gbps"] else float("nan")
    print(f'{r["name"]:12} {r["dir"]:6} {r["tflops"]:11.1f} {(p or {}).get("tflops", float("nan")):11.1f} '
          f'{ratio:6.2f} {bw:12.2f}  bad={r["bad_count"]}')
PY
