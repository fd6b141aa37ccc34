#!/usr/bin/env bash
# One GPU session (run on the device machine from the repo root, after
# scripts/device-prepare.sh here): gpu-check, launch overhead and streaming
# bandwidth, torch/Triton peers and every prepared small-op kernel verified
# and timed, then a table. Logs go to $OUT (or ./out).
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}
mkdir -p "$OUT"
export ROCKE_DEVICE=cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1 | tee "$OUT/gpu.txt"
echo "== gpu-check"
"$D/bin/rocke" gpu-check --artifacts "$D/gpucheck" 2>&1 | tee "$OUT/gpucheck.txt"
echo "== the GPU against the emulator, every family's default instance"
scripts/gpu-check-emu.sh "$D/bin" "$D/checkemu" 2>&1 | tee "$OUT/checkemu.txt"
if [ "${ROCKE_SKIP_LAUNCH:-0}" != 1 ]; then
  echo "== launch and bandwidth"
  ROCKE_BENCH_ARTIFACTS="$D/bench" "$D/bin/bench_launch" 20000 1024 2>&1 | tee "$OUT/launch.txt"
fi
echo "== IR build / verify / serialize / parse on this host's CPU"
"$D/bin/bench_ir" 100000 9 2>&1 | tee "$OUT/bench_ir.txt"
echo "== peers (torch, triton)"
PYTHONUNBUFFERED=1 python3 bench/peers_small_ops.py > "$OUT/peers.jsonl" 2> "$OUT/peers.err" || tail -5 "$OUT/peers.err"
echo "== rocke small ops"
: > "$OUT/rocke_ops.txt"
for m in "$D"/ops/*/manifest.json; do
  dir=$(basename "$(dirname "$m")")
  op=${dir%@*}
  shape=${dir#*@}
  echo "== $op $shape" >> "$OUT/rocke_ops.txt"
  verify=--verify
  [ "${ROCKE_NO_VERIFY:-0}" = 1 ] && verify=
  "$D/bin/rocke" run "$m" --shape "$shape" $verify --device cuda --warmup 20 --iters 100 \
    >> "$OUT/rocke_ops.txt" 2>&1 || echo "FAILED $op $shape" >> "$OUT/rocke_ops.txt"
done
# the shape-variant manifests (built without --shape) at every grid shape, named NAME-any@SHAPE
for m in "$D"/any/*/manifest.json; do
  [ -f "$m" ] || continue
  op=$(basename "$(dirname "$m")")-any
  for shape in $(cat "$D/any/shapes.txt"); do
    echo "== $op $shape" >> "$OUT/rocke_ops.txt"
    timeout 60 "$D/bin/rocke" run "$m" --shape "$shape" --verify --device cuda --warmup 20 --iters 100 \
      >> "$OUT/rocke_ops.txt" 2>&1 || echo "FAILED $op $shape" >> "$OUT/rocke_ops.txt"
  done
done
python3 bench/report_small_ops.py "$OUT/peers.jsonl" "$OUT/rocke_ops.txt" | tee "$OUT/table.md"
