#!/usr/bin/env bash
# session 8 call 7: the Python GPU check again after the reduce launch fix and the fp8 bound
cd "$(dirname "$0")/.." || exit 1
export OUT=${OUT:-out}
bash bench/device_call.sh "python:150:bash bench/python_h200.sh run --dir .devcarry/python"
