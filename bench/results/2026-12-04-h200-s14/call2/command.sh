#!/usr/bin/env bash
# Session 14 call 2 (after, here: CONV_ROWS='^(c192-3x3-28|c320-3x3-15)$' bench/conv_h200.sh prepare):
# wgrad at C = 192 and 320 (multiples of 64, not powers of two), beside cuDNN.
set -uo pipefail
CONV='CONV_ROWS="^(c192-3x3-28|c320-3x3-15)$" bench/conv_h200.sh run'
DEVICE_CALL_TAIL=40 bench/device_call.sh "conv:200:$CONV"
