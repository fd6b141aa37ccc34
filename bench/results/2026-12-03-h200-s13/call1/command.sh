#!/usr/bin/env bash
# Session 13 call 1 (after prepare.sh here):
#   rows     issue 15's auto kernels at odd and short rows after the LDS-lifetime fix (0dfe762);
#   unified  issue 25's mixed batch at forced split counts (the @sN rows), without the peers;
#   conv     issue 16's forward pick (odd3x3 now on the copy kernel) and the wgrad split, beside cuDNN;
#   gemm     fp8 e4m3 (block and per-tensor scales) at 8192^3 and 4096^3 beside torch._scaled_mm;
#   ncu      a Nsight Compute profile of the two prefill anchors (non-causal D128 and D64).
set -uo pipefail
D=.devcarry
ROWS='OPS_ROWS="^((rmsnorm|layernorm|softmax)-auto|layernorm)-any@65536,(127|255|1000|1001)$" PEER_SHAPES="65536,127 65536,255 65536,1000 65536,1001" PEERS_DTYPES=bf16 RUN_TIMEOUT=25 bash bench/rows_h200.sh run'
UNI='UNIFIED_PEERS=0 UNIFIED_ROWS="^mixed-p16$" UNIFIED_SPLITS="2 4 8 16" bash bench/attention_unified_h200.sh'
CONV='CONV_ROWS="^(r3x3-14|odd3x3|r3x3s2|r3x3-56)" bench/conv_h200.sh run'
cat > /tmp/gemm13.sh <<'G'
set -uo pipefail
: > "$OUT/shapes.txt"
for s in "8192 8192 8192" "4096 4096 4096"; do printf '%s rc e4m3 block\n%s rc e4m3 tensor\n' "$s" "$s" >> "$OUT/shapes.txt"; done
timeout 60 python3 bench/peers_gemm.py "$OUT/shapes.txt" > "$OUT/gemm_peers.jsonl" 2> "$OUT/gemm_peers.err"
cat "$OUT/gemm_peers.jsonl"
for d in .devcarry/g13/*/; do
  d=${d%/}; dir=$(basename "$d"); shape=${dir#*@}
  r=$(timeout 30 .devcarry/bin/rocke run "$d/manifest.json" --shape "$shape" --verify --device cuda --warmup 20 --iters 100 2>&1)
  printf '%-34s %s %s %s\n' "$dir" "$(grep -o '"bad_count": [0-9]*' <<<"$r" | head -1)" \
    "$(grep -o '"tflops": [0-9.]*' <<<"$r" | head -1)" "$(grep -m1 -iE 'error|refus|fail' <<<"$r")"
done
G
cat > /tmp/ncu13.sh <<'N'
set -uo pipefail
for k in d128:4,32,32,4096,4096,128 d64:8,16,16,2048,2048,64; do
  n=${k%%:*}; s=${k#*:}
  timeout 45 ncu --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    --section InstructionStats --launch-skip 2 --launch-count 1 \
    .devcarry/bin/rocke run .devcarry/attn_prof/$n/manifest.json --shape $s --device cuda --warmup 2 --iters 1 \
    > "$OUT/ncu_$n.txt" 2>&1
  echo "ncu $n rc=$?"; grep -E "Duration|Compute \(SM\) Throughput|Registers Per|Issue Slots Busy|No Eligible|Stall" "$OUT/ncu_$n.txt" | head -20
done
N
DEVICE_CALL_TAIL=40 bench/device_call.sh "rows:90:$ROWS" "unified:130:$UNI" "conv:170:$CONV" \
  "gemm:90:bash /tmp/gemm13.sh" "ncu:90:bash /tmp/ncu13.sh"
