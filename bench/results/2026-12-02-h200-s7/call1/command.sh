set -u
export ROCKE_DEVICE=cuda
bench/device_call.sh "sweep:540:OUT=\$OUT bench/sweep_h200.sh run"
