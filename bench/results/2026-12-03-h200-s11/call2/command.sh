#!/usr/bin/env bash
# Session 11 call 2 (after prepare.sh here; .devcarry/g11old = call 1's kernels with the 3c90b7e CLI as
# .devcarry/bin/rocke-old): torch.matmul at the three bf16 anchors, then call 1's and call 2's GEMM kernels
# interleaved, each verified and timed; then Nsight Compute on one launch of the new heuristic's kernel
# and of ws at 8192^3.
set -uo pipefail
D=.devcarry
OUT=${OUT:-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpu.txt"
printf '4096 4096 4096 rc bf16\n8192 8192 8192 rc bf16\n6144 5120 3072 rc bf16\n' > "$OUT/shapes.txt"
python3 bench/peers_gemm.py "$OUT/shapes.txt" 2>&1 | tee "$OUT/gemm_peers.jsonl"
one() {   # CLI DIR LABEL
  local m=$2/manifest.json dir; dir=$(basename "$2"); local shape=${dir#*@}
  r=$(timeout 40 "$1" run "$m" --shape "$shape" --verify --device cuda --warmup 20 --iters 100 2>&1)
  printf '%-6s %-24s %s %s\n' "$3" "$dir" "$(grep -o '"bad_count": [0-9]*' <<<"$r" | head -1)" \
    "$(grep -o '"tflops": [0-9.]*' <<<"$r" | head -1)" | tee -a "$OUT/gemm.txt"
}
for rep in 1 2; do
  for d in $D/g11old/*/; do one $D/bin/rocke-old "${d%/}" old; done
  for d in $D/g11/*/; do one $D/bin/rocke "${d%/}" new; done
done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for d in heur ws-s3; do
  m=$D/g11/$d@8192,8192,8192/manifest.json
  timeout 120 "$NCU" --launch-skip 3 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
    --section SchedulerStats --section Occupancy --section MemoryWorkloadAnalysis \
    $D/bin/rocke run "$m" --shape 8192,8192,8192 --device cuda --warmup 2 --iters 2 > "$OUT/ncu-$d.txt" 2>&1
  grep -E "Duration|Throughput|Stall|Warp Cycles|Issued|Eligible|Active Warps|No Eligible|L2 Hit|DRAM" "$OUT/ncu-$d.txt" | head -40
done
