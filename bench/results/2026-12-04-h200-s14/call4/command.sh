#!/usr/bin/env bash
# Session 14 call 4 (after, here: CONV_ROWS='^(c192-3x3-28|c192-3x3-28k256|c320-3x3-15|odd3x3-17x19|odd3x3-31)$'
# bench/conv_h200.sh prepare): wgrad's wgmma kernel at tile N 64 (wgrad-t64x64, -t128x64) where C/groups
# is a multiple of 64 but not of 128, and at the odd rows, beside mma and cuDNN.
set -uo pipefail
CONV='CONV_ROWS="^(c192-3x3-28|c192-3x3-28k256|c320-3x3-15|odd3x3-17x19|odd3x3-31)$" bench/conv_h200.sh run'
DEVICE_CALL_TAIL=80 bench/device_call.sh "conv:280:$CONV" | grep -E "wgrad|rc=|NVIDIA"
