#!/usr/bin/env bash
# Install the Debian packages rocke needs (idempotent). As root it installs
# what is missing; otherwise it prints the exact command and stops.
set -euo pipefail

# clang-22: `make test` builds the library a second time with it and checks
# that the IR of every kernel is byte-identical to the gcc build's.
# python3-numpy: the Python package's tests (python/tests).
# chromium: renders `rocke sweep report` pages in tests/sweep; slurm-wlm + munge: the single-node Slurm
# cluster tests/sweep starts for `rocke sweep --slurm` (both tests say so and skip without them).
PKGS=(cmake make gcc clang-22 python3 python3-numpy pkg-config libcmocka-dev libxxhash-dev libelf-dev
      libmsgpack-dev zlib1g-dev llvm-22-dev lld-22 chromium slurm-wlm munge)
# Optional: libclang-rt-22-dev builds the libFuzzer target (make fuzz).
if [ "${ROCKE_WITH_FUZZ:-0}" = 1 ]; then PKGS+=(libclang-rt-22-dev); fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "rocke: missing packages: ${missing[*]}" >&2
  echo "rocke: run as root:  $cmd" >&2
  exit 1
fi
echo "rocke: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
