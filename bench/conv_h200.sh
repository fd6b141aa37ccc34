#!/usr/bin/env bash
# Convolutions on the H200. Two steps, because the GPU machine has no LLVM:
#   bench/conv_h200.sh prepare [ROCKE] [TARGET]   here (scripts/device-prepare.sh calls it): the
#       kernels of bench/conv_shapes.txt into .devcarry/conv/ and the CLI into .devcarry/bin/
#   bench/conv_h200.sh [run]                      on the device, from the repo root, .devcarry
#       carried: torch/cuDNN (channels_last, bf16) in the same run, then every rocke kernel
#       verified and timed, then the rocke / cuDNN ratio per shape and direction (and rocke's
#       GB/s over a copy's, the ceiling of a depthwise kernel).
# CONV_ROWS (a regex of the shape names, both steps) keeps to some rows, e.g. CONV_ROWS='^dw'.
# prepare keeps the manifests and the binaries (CONV_KEEP_IR=1: the IR too, to run them on the emulator).
# Each direction runs three times on sm_90a:
# the heuristic's kernel (fwd), and on each matrix path (fwd-mma, fwd-wgmma; the same for
# dgrad and wgrad), and wgrad-sk16 (the heuristic's wgrad at 16 splits, session 5's cap);
# depthwise rows add the direct kernel at other knobs (fwd-px1, -px2, -px8v4: dw_pix 8 with
# vec_a 4, -cv8: 8 channel vectors a block) and the small-group kernel it replaced (fwd-sg);
# their dgrad and wgrad (the direct kernels since session 9) add the one-channel implicit GEMMs
# they replaced (dgrad-ig, wgrad-ig) and other knobs (dgrad-px2, -px8v4, -cv8; wgrad-px2: 2 taps a
# thread, -px8v4, -cv32, -sk8, -sk32: 8 and 32 splits). 1x1
# shapes also run -copy in every direction (the threads-copy wgmma kernels the TMA ones replaced) and
# fwd/dgrad -plain and -ws (the GEMM's TMA kernel on its plain and ws schedules; the heuristic's is
# persistent). r3x3-14 adds fwd-tMxN: the threads-copy wgmma forward at other tiles (K 64, 4 stages).
# 3x3 ungrouped rows with C a multiple of 8: the heuristic's forward is the pixel-box kernel (load=tma,
# algo igemm: _ldtma_..._bpP_bqQ in the name); fwd-copy is the threads-copy wgmma kernel it replaced
# (what measured 0.55x cuDNN at r3x3-14), and r3x3-14 / odd3x3-17x19 / r3x3s2-28 add the box kernel
# at other knobs: fwd-box (the heuristic's box knobs, asked for with --load tma: where the heuristic
# takes the copy kernel for the box kernel's padding, odd3x3-17x19 since session 12), fwd-bq16 (box 2 rows x 16 columns), fwd-b128x256 (tile 128x256), fwd-b64x64,
# fwd-bpers (schedule persistent over 132 SMs), fwd-bws (schedule ws).
# Logs go to $OUT (or ./out).
set -uo pipefail
D=.devcarry
mode=${1:-run}
if [ "$mode" = prepare ]; then
  set -e
  B=${2:-build/rocke}
  T=${3:-sm_90a}
  mkdir -p "$D/bin"
  cp "$B" "$D/bin/rocke"
  rm -rf "$D/conv"
  mkdir -p "$D/conv"
  grep -v '^#' bench/conv_shapes.txt | while read -r name n c h w k r s st pd g; do
    [ -n "$name" ] || continue
    [[ $name =~ ${CONV_ROWS:-.} ]] || continue
    variants="fwd dgrad wgrad"
    # (-mma of a depthwise row would be the heuristic's direct kernel again: its -ig rows stand for it)
    [ "$T" = sm_90a ] && [ "$g" = 1 ] && variants="$variants fwd-mma dgrad-mma wgrad-mma"
    # wgrad-sk16: the heuristic's wgrad at session 5's cap of 16 splits (against its 2 blocks per SM)
    [ "$T" = sm_90a ] && [ "$g" = 1 ] && variants="$variants fwd-wgmma dgrad-wgmma wgrad-wgmma wgrad-sk16"
    # depthwise (C = K = groups): the direct kernels' knobs around the heuristic's pick, the
    # small-group forward (-sg) and the one-channel implicit GEMMs of dgrad / wgrad (-ig) they replaced
    [ "$g" = "$c" ] && [ "$g" = "$k" ] && variants="$variants fwd-px1 fwd-px2 fwd-px8v4 fwd-cv8 fwd-sg \
      dgrad-ig dgrad-px2 dgrad-px8v4 dgrad-cv8 wgrad-ig wgrad-px2 wgrad-px8v4 wgrad-cv32 wgrad-sk8 wgrad-sk32"
    # the 14x14 forward (0.55x cuDNN at the heuristic's 128x64 wgmma tile): the other wgmma tiles
    # (docs/conv.md, "What limits the 14x14 forward")
    [ "$T" = sm_90a ] && [ "$name" = r3x3-14 ] && variants="$variants fwd-t128x128 fwd-t128x256 fwd-t64x128 fwd-t64x64"
    # wgrad's split (session 12: the count whose busiest SM runs the fewest K tiles): the old rule's
    # counts beside it (-skN), and at odd3x3-17x19 (M = K = 136: 0.53 of two 128-row tiles) tile M 64
    # (wgrad-old; a locked split also changes the heuristic's tile, so the old tile is named too)
    [ "$T" = sm_90a ] && [[ $name =~ ^(r3x3-14|r3x3-56|r3x3s2-28)$ ]] && variants="$variants wgrad-old"
    [ "$T" = sm_90a ] && [[ $name =~ ^odd3x3 ]] && variants="$variants wgrad-t64x64 wgrad-t64x128"
    # C/groups a multiple of 64 but not of 128: wgmma at tile N 64 (its tile N 128 loses to mma there)
    [ "$T" = sm_90a ] && [[ $name =~ ^c(192|320)- ]] && variants="$variants wgrad-t64x64 wgrad-t128x64"
    # the pixel-box forward (the heuristic's fwd here): the threads-copy kernel it replaced, other boxes,
    # tiles and schedules
    [ "$T" = sm_90a ] && [ "$g" = 1 ] && [ "$r$s" != 11 ] && [ $((c % 8)) = 0 ] && variants="$variants fwd-copy"
    [ "$T" = sm_90a ] && [[ $name =~ ^(r3x3-14|odd3x3-17x19|r3x3s2-28)$ ]] &&
      variants="$variants fwd-box fwd-bq16 fwd-b128x256 fwd-b64x64 fwd-bpers fwd-bws"
    # 1x1 (stride 1, unpadded) with C and K multiples of 8: the heuristic's kernels read their operands
    # by TMA (load=tma, _ldtma in the name: fwd and dgrad the GEMM's kernel, wgrad the split-K one);
    # -copy: the threads-copy wgmma kernels they replaced; -plain, -ws: the GEMM's other schedules
    [ "$T" = sm_90a ] && [ "$g" = 1 ] && [ "$r$s$st$pd" = 1110 ] && [ $((c % 8 + k % 8)) = 0 ] &&
      variants="$variants fwd-copy dgrad-copy wgrad-copy fwd-plain dgrad-plain fwd-ws dgrad-ws"
    for v in $variants; do
      dir=${v%%-*}
      path=()
      case $v in
        *-sk*) path=(--split-k "${v#*-sk}") ;;
        *-px8v4) path=(--dw-pix 8 --vec-a 4) ;;
        *-px*) path=(--dw-pix "${v#*-px}") ;;
        *-cv*) path=(--dw-cvecs "${v#*-cv}") ;;
        *-sg) path=(--dw-pix off --dw-cvecs off) ;;
        *-ig) path=(--algo igemm --path mma) ;;
        *-copy) path=(--path wgmma --load copy) ;;
        wgrad-old) case $name in
            r3x3-14) path=(--path wgmma --split-k 4 --tile 128x128x64 --warps 8x1) ;;
            r3x3-56) path=(--path wgmma --split-k 30 --tile 64x64x64 --warps 4x1) ;;
            *) path=(--path wgmma --split-k 8 --tile 128x64x64 --warps 8x1) ;;
          esac ;;
        wgrad-t*) tl=${v#*-t}; path=(--path wgmma --tile "${tl}x64" --warps "$(( ${tl%%x*} / 16 ))x1") ;;
        fwd-t*) tl=${v#*-t}; path=(--path wgmma --load copy --tile "${tl}x64" --warps "$(( ${tl%%x*} / 16 ))x1") ;;
        fwd-box) path=(--path wgmma --load tma) ;;
        fwd-bq16) path=(--path wgmma --load tma --box-p 2 --box-q 16) ;;
        fwd-b128x256) path=(--path wgmma --load tma --tile 128x256x64 --warps 8x1) ;;
        fwd-b64x64) path=(--path wgmma --load tma --tile 64x64x64 --warps 4x1) ;;
        fwd-bpers) path=(--path wgmma --load tma --schedule persistent --blocks 132) ;;
        fwd-bws) path=(--path wgmma --load tma --schedule ws) ;;
        *-plain|*-ws) path=(--path wgmma --load tma --schedule "${v#*-}") ;;
        *-*) path=(--path "${v#*-}") ;;
      esac
      "$B" build conv --direction "$dir" "${path[@]}" --dtype bf16 --target "$T" --shape "$n,$c,$h,$w,$k,$r,$s" \
        --stride "${st}x$st" --pad "${pd}x${pd}x${pd}x$pd" --groups "$g" -o "$D/conv/$name-$v" >/dev/null
      # the GPU run reads the manifest and the binary; CONV_KEEP_IR=1 keeps the IR for an emulator check
      rm -f "$D/conv/$name-$v"/*.ll "$D/conv/$name-$v"/*.ptx
      [ "${CONV_KEEP_IR:-0}" = 1 ] || rm -f "$D/conv/$name-$v"/*.ir
    done
  done
  du -sh "$D/conv"
  exit 0
fi
[ "$mode" = run ] || { echo "usage: $0 prepare [ROCKE] [TARGET] | run" >&2; exit 2; }
OUT=${OUT:-out}
mkdir -p "$OUT"
export ROCKE_DEVICE=cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv 2>&1 | tee "$OUT/gpu.txt"
echo "== torch conv (cuDNN)"
# the peers at the rows CONV_ROWS keeps (every row without it)
awk -v re="${CONV_ROWS:-.}" '/^#/ || $1 ~ re' bench/conv_shapes.txt > "$OUT/conv_shapes.txt"
PYTHONUNBUFFERED=1 python3 bench/peers_conv.py "$OUT/conv_shapes.txt" > "$OUT/conv_peers.jsonl" 2> "$OUT/conv_peers.err" \
  || tail -5 "$OUT/conv_peers.err"
echo "== rocke conv"
: > "$OUT/rocke_conv.txt"
: > "$OUT/rocke_conv.jsonl"
grep -v '^#' bench/conv_shapes.txt | while read -r name n c h w k r s st pd g; do
  [ -n "$name" ] || continue
  [[ $name =~ ${CONV_ROWS:-.} ]] || continue   # CONV_ROWS: a regex of the shape names to run
  for dir in fwd fwd-mma fwd-wgmma fwd-px1 fwd-px2 fwd-px8v4 fwd-cv8 fwd-sg fwd-copy fwd-plain fwd-ws dgrad \
      dgrad-mma dgrad-wgmma dgrad-copy dgrad-plain dgrad-ws dgrad-ig dgrad-px2 dgrad-px8v4 dgrad-cv8 wgrad \
      wgrad-mma wgrad-wgmma wgrad-copy wgrad-sk16 wgrad-old wgrad-t64x64 wgrad-t64x128 wgrad-t128x64 wgrad-ig wgrad-px2 wgrad-px8v4 wgrad-cv32 wgrad-sk8 wgrad-sk32 \
      fwd-t128x128 fwd-t128x256 fwd-t64x128 fwd-t64x64 fwd-bq16 fwd-b128x256 fwd-b64x64 fwd-bpers fwd-bws; do
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
