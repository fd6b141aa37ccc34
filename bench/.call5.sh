#!/usr/bin/env bash
# session 8 call 5: convolution (1x1 through TMA, the depthwise direct kernel, 14x14 3x3) next to cuDNN
cd "$(dirname "$0")/.." || exit 1
export OUT=${OUT:-out}
bash bench/device_call.sh "gemm64:70:bash .devcarry/gemm64/run.sh" "conv:200:CONV_ROWS='^(r1x1-56|dw3x3-28|r3x3-14)\$' bash bench/conv_h200.sh"
