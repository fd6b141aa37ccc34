#!/usr/bin/env bash
# Issue 23 on the H200 (run on the device machine from the repo root with a
# built rocke; not run yet): (1) tune the small-op families over a grid of
# shapes with every GPU (--devices all) and compare each tuned kernel with
# the heuristic's at every shape, same seed and iterations; (2) the overhead
# of a 200-config sweep: wall time minus the kernels' own timed run time,
# over wall time. Outputs and a summary go to $OUT.
set -uo pipefail
ROCKE=${ROCKE:-build/rocke}
T=${T:-sm_90a}
OUT=${OUT:-out/sweep-h200}
ITERS=${ITERS:-100}
mkdir -p "$OUT"
export ROCKE_DEVICE=cuda
nvidia-smi --query-gpu=name,driver_version --format=csv 2>&1 | tee "$OUT/gpu.txt"

# the grid: rows x row length for the row families, elements for elementwise
printf '%s\n' 1024,1024 4096,4096 8192,1024 1024,8192 32768,4096 4096,32768 1024,50257 4096,4097 \
  > "$OUT/rows.txt"
printf '%s\n' 1048576 16777216 268435456 1000003 > "$OUT/elems.txt"

# family|fixed knobs|swept knobs|shapes file
specs=(
  "softmax|--dtype bf16|--knob block_size=128,256,512,1024 --knob vec=4,8 --knob rows_per_block=1,2,4|rows.txt"
  "layernorm|--dtype bf16|--knob block_size=128,256,512,1024 --knob vec=4,8 --knob rows_per_block=1,2,4|rows.txt"
  "rmsnorm|--dtype bf16|--knob block_size=128,256,512,1024 --knob vec=4,8 --knob rows_per_block=1,2,4|rows.txt"
  "reduce|--dtype bf16 --op sum|--knob block_size=128,256,512,1024 --knob vec=4,8 --knob rows_per_block=1,2,4|rows.txt"
  "elementwise|--dtype bf16 --op add|--knob block_size=128,256,512,1024 --knob vec=4,8 --knob unroll=1,2,4|elems.txt"
)

: > "$OUT/compare.csv"
echo "family,shape,heuristic_ms,tuned_ms,heuristic_kernel,tuned_kernel" >> "$OUT/compare.csv"
ms_of() { grep -h '^PerfJSON:' "$1" | sed 's/^PerfJSON: //' | python3 -c 'import json,sys; print(json.load(sys.stdin)["ms"])'; }
for spec in "${specs[@]}"; do
  IFS='|' read -r fam fixed swept shapes <<< "$spec"
  echo "== tune $fam"
  # shellcheck disable=SC2086
  "$ROCKE" tune "$fam" --target "$T" $fixed $swept --shapes-file "$OUT/$shapes" --devices all -q \
    --sweep-dir "$OUT/$fam.sweep" -o "$OUT/$fam.tuning.json" 2>&1 | tee "$OUT/$fam.tune.txt"
  "$ROCKE" sweep report "$OUT/$fam.sweep" > "$OUT/$fam.report.txt" 2>&1
  while read -r shape; do
    for how in heuristic tuned; do
      tuning=(); [ "$how" = tuned ] && tuning=(--tuning "$OUT/$fam.tuning.json")
      dir="$OUT/k/$fam@$shape/$how"
      mkdir -p "$OUT/k/$fam@$shape"
      # shellcheck disable=SC2086
      "$ROCKE" build "$fam" --target "$T" $fixed --shape "$shape" "${tuning[@]}" -o "$dir" > "$dir.build.txt" 2>&1
      "$ROCKE" run "$dir/manifest.json" --verify --seed 1 --iters "$ITERS" > "$dir.run.txt" 2>&1
    done
    h=$(ms_of "$OUT/k/$fam@$shape/heuristic.run.txt"); t=$(ms_of "$OUT/k/$fam@$shape/tuned.run.txt")
    hk=$(grep -o 'rk_[a-z0-9_]*' "$OUT/k/$fam@$shape/heuristic.run.txt" | head -1)
    tk=$(grep -o 'rk_[a-z0-9_]*' "$OUT/k/$fam@$shape/tuned.run.txt" | head -1)
    echo "$fam,$shape,$h,$t,$hk,$tk" >> "$OUT/compare.csv"
  done < "$OUT/$shapes"
done

echo "== overhead of a 200-config sweep (softmax 4096x4096, looped rows)"
start=$(date +%s.%N)
"$ROCKE" sweep softmax --target "$T" --dtype bf16 --shapes 4096,4096 --knob chunks=0 \
  --knob block_size=64,128,256,512,1024 --knob vec=1,2,4,8 --knob min_blocks_per_sm=0,1,2,3,4,5,6,7,8,10 \
  --warmup 20 --iters 200 --devices all -q -o "$OUT/overhead.sweep" > "$OUT/overhead.txt" 2>&1
end=$(date +%s.%N)

python3 - "$OUT" "$start" "$end" <<'PY' | tee "$OUT/summary.txt"
import csv, json, statistics, sys
out, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
rows = list(csv.DictReader(open(f"{out}/compare.csv")))
ok = [r for r in rows if r["heuristic_ms"] and r["tuned_ms"]]
slower = [r for r in ok if float(r["tuned_ms"]) > float(r["heuristic_ms"]) * 1.02]
print(f"shapes compared: {len(ok)} of {len(rows)}; tuned slower than the heuristic by >2%: {len(slower)}")
for r in slower:
    print(f"  slower: {r['family']} {r['shape']} heuristic {r['heuristic_ms']} ms tuned {r['tuned_ms']} ms")
# where the heuristic is weakest: the half of the shapes with the largest tuned speedup per family
by_fam = {}
for r in ok:
    by_fam.setdefault(r["family"], []).append(float(r["heuristic_ms"]) / float(r["tuned_ms"]))
for fam, sp in sorted(by_fam.items()):
    sp.sort(reverse=True)
    weak = sp[: max(1, len(sp) // 2)]
    print(f"{fam}: median speedup {statistics.median(sp):.3f}, on the weakest half {statistics.median(weak):.3f}")
recs = [json.loads(l) for l in open(f"{out}/overhead.sweep/results.jsonl") if l.strip()]
m = json.load(open(f"{out}/overhead.sweep/sweep.json"))
# the kernels' own time: the verify launch, 20 warm-up and 200 timed launches at the median
kernel_s = sum(r.get("ms", 0) * 221 for r in recs) / 1e3
wall = end - start
print(f"200-config sweep: {m['configs']} configs, {len(recs)} records, wall {wall:.1f} s, kernels {kernel_s:.2f} s, "
      f"overhead {100 * (wall - kernel_s) / wall:.1f}% (issue 23 asks < 15%)")
PY
