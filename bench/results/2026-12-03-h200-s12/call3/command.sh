#!/usr/bin/env bash
# Session 12 call 3 (kernels built here from 557592d's CLI: the attention rows below from
# bench/attention_shapes.txt, `bench/attention_unified_h200.sh prepare`,
# `CONV_ROWS='^(r3x3-14|odd3x3|r3x3s2|r3x3-56)' bench/conv_h200.sh prepare build/rocke sm_90a`, and
# call 2's GEMM kernels plus .devcarry/diag and g12b, see gemm_diag.sh):
#   attn     issue 13's folded softmax (default and -fold rows) against its exact one (-xs) and SDPA;
#   unified  issue 25's batches with and without reverse_order, the mixed one at forced split counts;
#   conv     issue 16's forward pick and wgrad split (conv2's two commits) beside cuDNN;
#   gemm     gemm_diag.sh.
ROWS='^(b4h32s4096d128|b4h32s4096d128-xs|b4h32s4096d128-causal|b4h32s4096d128-causal-xs|gqa32x8-s8192-causal|gqa32x8-s8192-causal-xs|b4h32s4096d128-bshd|b4h32s4096d128-bshd-xs|b4h32s4096d128-ws-s3|b8h16s2048d64|b8h16s2048d64-fold|b8h16s2048d64-fold-bn64|b8h16s2048d64-fold-bn64-s3|b8h16s2048d64-xs-bn64|b8h16s2048d64-pingpong-bm192-s3|b8h16s2048d64-pingpong-bm192-s3-fold|b8h16s2048d64-ws-s3)$'
# the peers at these rows only: a copy of the script over a filtered shapes file
F=$(mktemp); grep -E "^#|$(sed 's/)\$$/)[[:space:]]/' <<<"$ROWS")" bench/attention_shapes.txt > "$F"
sed "s#bench/attention_shapes.txt#$F#g" bench/attention_h200.sh > "$F.sh"
UNI='OUT=$OUT UNIFIED_PEERS=0 UNIFIED_ROWS="^(mixed|decode|prefill)-p16(-ro)?$" bash bench/attention_unified_h200.sh'
DEVICE_CALL_TAIL=40 bench/device_call.sh "attn:140:bash $F.sh" "unified:90:$UNI" \
  "conv:120:CONV_ROWS='^(r3x3-14|odd3x3|r3x3s2|r3x3-56)' bench/conv_h200.sh run" \
  "gemm:60:bash bench/results/2026-12-03-h200-s12/call3/gemm_diag.sh"
