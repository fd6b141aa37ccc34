#!/usr/bin/env bash
# Session 14 call 1 (after, here: CONV_ROWS='^(r3x3-56|odd3x3-17x19|odd3x3-13x11|odd3x3-31)$'
# bench/conv_h200.sh prepare): issue 16's wgrad path rule (mma where wgmma's tile keeps under 3/4 of
# mma's useful MACs) at the shape that motivated it and at two odd ones either side, beside cuDNN.
set -uo pipefail
CONV='CONV_ROWS="^(r3x3-56|odd3x3-17x19|odd3x3-13x11|odd3x3-31)$" bench/conv_h200.sh run'
DEVICE_CALL_TAIL=60 bench/device_call.sh "conv:240:$CONV"
