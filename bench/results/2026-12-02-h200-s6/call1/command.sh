set -u
export ROCKE_DEVICE=cuda
bench/device_call.sh \
 "small:140:python3 bench/peers_small_ops.py > \$OUT/peers.jsonl 2> \$OUT/peers.err; OPS_ROWS='^(softmax|sum|transpose)' ANY_SHAPES='16384,2047 1000,151936 65536,127 1024,50257 8192,5000' bench/small_ops_focus.sh > \$OUT/focus.txt 2>&1; python3 bench/report_small_ops.py \$OUT/peers.jsonl \$OUT/rocke_ops.txt > \$OUT/table.md; cat \$OUT/table.md" \
 "unified:120:UNIFIED_PEERS=0 bench/attention_unified_h200.sh" \
 "decode:90:ROWS='^(b128-ctx2k\$|b8-hq64-ctx32k\$|b8-hq64-ctx32k-atom|mixed-b64\$|mixed-b64-ks8|b32-ctx8k-sq4\$|b32-gqa8-sq4\$|b16-gqa8|b32-ctx8k-fp8\$|b32-ctx8k-fp8-s4|b8-hq64-ctx32k-fp8\$)' bench/attention_decode_h200.sh" \
 "gemmsweep:140:bench/gemm_sweep_h200.sh run" \
 "fp8mma:25:for d in .devcarry/gemm/*-mma@*; do echo == \$d; .devcarry/bin/rocke run \$d/manifest.json --shape 4096,4096,4096 --verify --device cuda --warmup 20 --iters 100 2>&1 | tail -4; done"
