set -u
export ROCKE_DEVICE=cuda
R=.devcarry/bin/rocke
bench/device_call.sh \
 "attention:190:ATTN_ROWS='^(b4h32s4096d128|b4h32s4096d128-(pingpong.*|causal|causal-pingpong.*|bshd|causal-bshd)|gqa32x8-s8192-causal(-pingpong|-bshd)?|b8h16s2048d64(-plain|-pingpong.*|-ws-bm192|-bshd)?|varlen.*)\$' bench/attention_h200.sh" \
 "gemm:150:GEMM_DIRS='@(1,|16,|64,|2047|4096|2048)' GEMM_SHAPES=bench/gemm_shapes.txt bench/gemm_h200.sh" \
 "conv:60:bench/conv_h200.sh" \
 "rows:50:python3 bench/peers_small_ops.py 16384,2047 65536,127 > \$OUT/peers.jsonl 2> \$OUT/peers.err; OPS_ROWS=. ANY_SHAPES= bench/small_ops_focus.sh > \$OUT/focus.txt 2>&1; python3 bench/report_small_ops.py \$OUT/peers.jsonl \$OUT/rocke_ops.txt > \$OUT/table.md; cat \$OUT/table.md" \
 "decode:80:ROWS='^(b32-ctx8k|b128-ctx2k|mixed-b64|b8-hq64-ctx32k)\$' bench/attention_decode_h200.sh; for n in 1 4 8; do echo == b32-ctx8k num_splits=\$n; $R run .devcarry/attn_decode/b32-ctx8k/manifest.json --shape 32,32,8,1,8192,128 --page-size 16 --lengths equal --arg num_splits=\$n --verify --device cuda --warmup 20 --iters 100 2>&1 | grep -E 'split|Perf:|bad='; done; for n in 1 8; do echo == mixed-b64 num_splits=\$n; $R run .devcarry/attn_decode/mixed-b64/manifest.json --shape 64,32,8,1,32768,128 --page-size 16 --lengths \$OUT/mixed-b64.lengths --arg num_splits=\$n --verify --device cuda --warmup 20 --iters 100 2>&1 | grep -E 'split|Perf:|bad='; done"
