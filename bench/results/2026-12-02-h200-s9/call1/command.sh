#!/usr/bin/env bash
# session 9 call 1: unified attention with the key-split decode blocks (new) against session 8's kernels (old),
# the mixed batch's parts (varlen prefill + paged decode kernels back to back), FlexAttention/SDPA peers
export OUT=${OUT:-out}
bash bench/device_call.sh \
  "new:260:UNIFIED_PEERS=0 UNIFIED_SHAPES=.devcarry/unified_new.txt bash bench/attention_unified_h200.sh" \
  "old:90:UNIFIED_PEERS=0 UNIFIED_PARTS=0 UNIFIED_DIR=.devcarry/attn_unified_old UNIFIED_SHAPES=.devcarry/unified_old.txt bash bench/attention_unified_h200.sh" \
  "peers:170:UNIFIED_PARTS=0 UNIFIED_ROWS='^none\$' UNIFIED_SHAPES=.devcarry/unified_peers.txt bash bench/attention_unified_h200.sh"
