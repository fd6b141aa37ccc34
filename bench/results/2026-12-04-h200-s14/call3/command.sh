#!/usr/bin/env bash
# Session 14 call 3 (after, here: CONV_ROWS='^(c192-3x3-28k256|c384-3x3-14k256)$' bench/conv_h200.sh
# prepare): wgrad at C = 192 and 384 with K = 256 (whole wgmma row tiles), beside cuDNN.
set -uo pipefail
CONV='CONV_ROWS="^(c192-3x3-28k256|c384-3x3-14k256)$" bench/conv_h200.sh run'
DEVICE_CALL_TAIL=40 bench/device_call.sh "conv:200:$CONV"
