#!/usr/bin/env bash
# GEMM on the device machine (run from the repo root after
# `scripts/device-prepare.sh build sm_90a` here, which builds the kernels of
# bench/gemm_shapes.txt, every wgmma schedule at the anchors, the fp8 rows of
# bench/gemm_fp8_shapes.txt (per-tensor and per-128-block scales; block rows with
# promote=overlap and promote=serial side by side: folders ...-block-serial@), the
# epilogue=tma variants, and session 6's path rows (rc-bf16-stream@M,8192,8192 next to
# rc-bf16-mma@..., rc-bf16-mma-TILE@4096,4096,4096) into .devcarry/gemm/): torch.matmul and the fp8
# torch._scaled_mm with the same scales in the same run, then every rocke
# kernel verified and timed, then the SASS evidence of each cubin when a
# disassembler is present (UTMASTG: TMA stores). Logs go to $OUT (or ./out).
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}
mkdir -p "$OUT"
export ROCKE_DEVICE=cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 | tee "$OUT/gpu.txt"
# GEMM_SHAPES / GEMM_FP8_SHAPES: the peers' shape files; GEMM_DIRS: a regex of the kernel folders to
# run (all by default), so the list can be split over calls
SHAPES=${GEMM_SHAPES:-bench/gemm_shapes.txt}
FP8_SHAPES=${GEMM_FP8_SHAPES:-bench/gemm_fp8_shapes.txt}
echo "== torch.matmul"
PYTHONUNBUFFERED=1 python3 bench/peers_gemm.py "$SHAPES" > "$OUT/gemm_peers.jsonl" 2> "$OUT/gemm_peers.err" \
  || tail -5 "$OUT/gemm_peers.err"
echo "== torch._scaled_mm (fp8, per-tensor and 1x128 / 128x128 block scales, bf16 out; fp32 dequant where refused)"
PYTHONUNBUFFERED=1 python3 bench/peers_gemm.py "$FP8_SHAPES" > "$OUT/gemm_fp8_peers.jsonl" \
  2> "$OUT/gemm_fp8_peers.err" || tail -5 "$OUT/gemm_fp8_peers.err"
echo "== rocke gemm"
: > "$OUT/rocke_gemm.txt"
for m in "$D"/gemm/*/manifest.json; do
  dir=$(basename "$(dirname "$m")")
  [[ $dir =~ ${GEMM_DIRS:-.} ]] || continue
  shape=${dir#*@}
  echo "== $dir" >> "$OUT/rocke_gemm.txt"
  timeout 45 "$D/bin/rocke" run "$m" --shape "$shape" --verify --device cuda --warmup 20 --iters 100 \
    >> "$OUT/rocke_gemm.txt" 2>&1 || echo "FAILED $dir" >> "$OUT/rocke_gemm.txt"
done
grep -h 'PerfJSON' "$OUT/rocke_gemm.txt" | sed 's/^PerfJSON: //' > "$OUT/rocke_gemm.jsonl"
cat "$OUT/gemm_peers.jsonl" "$OUT/gemm_fp8_peers.jsonl" "$OUT/rocke_gemm.jsonl"
# SASS evidence: HGMMA (wgmma), UTMALDG / UTMASTG (TMA loads / stores), SYNCS (mbarriers), USETMAXREG (setmaxnreg)
# per cubin, and the registers the driver tool reports
DIS=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
if [ -x "$DIS" ]; then
  : > "$OUT/gemm_sass.txt"
  for c in "$D"/gemm/*/*.cubin; do
    sass=$("$DIS" -sass "$c" 2>/dev/null)
    printf '%s HGMMA=%s UTMALDG=%s UTMASTG=%s SYNCS=%s USETMAXREG=%s %s\n' "$(basename "$(dirname "$c")")" \
      "$(grep -c HGMMA <<<"$sass")" "$(grep -c UTMALDG <<<"$sass")" "$(grep -c UTMASTG <<<"$sass")" \
      "$(grep -c SYNCS <<<"$sass")" \
      "$(grep -c USETMAXREG <<<"$sass")" "$("$DIS" -res-usage "$c" 2>/dev/null | grep -o 'REG:[0-9]*' | head -1)" \
      >> "$OUT/gemm_sass.txt"
  done
  cat "$OUT/gemm_sass.txt"
else
  echo "no cuobjdump: no SASS evidence this run" | tee "$OUT/gemm_sass.txt"
fi
