#!/usr/bin/env bash
# Attention decode without a GPU: builds every row of bench/attention_decode_shapes.txt
# for T (default sm_90a), runs ptxas -v on its PTX and prints registers, spill
# stores, LDS (static or the launch's dynamic minimum) and the resident blocks per
# SM they allow (128 threads a block; 64 Ki registers in 256-register warp
# chunks, 228 KiB of shared memory with 1 KiB reserved per block, as on sm_80 and
# sm_90), next to the split count the heuristic chose. Run from the repo root after
# `make build`; PTXAS overrides the ptxas used.
set -euo pipefail
T=${1:-sm_90a}
PTXAS=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
printf '%-24s %4s %6s %8s %9s %6s\n' name regs spill "LDS KB" blocks/SM splits
grep -v '^#' bench/attention_decode_shapes.txt | while read -r name nb Hq Hkv Sq ctx Dh page kind knobs; do
  [ -n "$name" ] || continue
  # shellcheck disable=SC2086
  out=$(build/rocke build attention --mode decode --dtype bf16 --head-dim "$Dh" --page-size "$page" $knobs \
    --target "$T" --shape "$nb,$Hq,$Hkv,$Sq,$ctx,$Dh" -o "$W/$name" 2>&1 < /dev/null) || { echo "$name: build failed"; continue; }
  ptx=$(ls "$W/$name"/*.ptx)
  v=$("$PTXAS" -arch="$T" -v "$ptx" -o "$W/$name/k.cubin" 2>&1)
  python3 - "$name" "$W/$name/manifest.json" "$v" "$ptx" <<'PY'
import json, math, re, sys
name, manifest, v, ptx = sys.argv[1:5]
regs = int(re.search(r"Used (\d+) registers", v).group(1))
spill = int(re.search(r"(\d+) bytes spill stores", v).group(1))
static = re.search(r"(\d+) bytes smem", v)
lds = max(int(static.group(1)) if static else 0, json.load(open(manifest)).get("dyn_smem_min", 0))
by_regs = 65536 // (math.ceil(regs * 32 / 256) * 256 * 4)
by_lds = 233472 // (lds + 1024)
splits = re.search(r"_ks(\d+)_", ptx).group(1)
print(f"{name:24s} {regs:4d} {spill:6d} {lds / 1024:8.1f} {min(by_regs, by_lds, 32):9d} {splits:>6s}")
PY
done
