#!/bin/sh
# rocke — runs the Python package's tests (python/tests/test_*.py) against a
# build's librocke.so; ctest's python/package entry. Exit 77 = skipped.
# usage: run_tests.sh BUILD_DIR
build=${1:?usage: run_tests.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${ROCKE_PY_SKIP:-}" ]; then
  echo "python tests skipped: $ROCKE_PY_SKIP"
  exit 77
fi
# The first interpreter that has numpy (Debian's python3-numpy lives in /usr/bin/python3).
py=
for cand in ${ROCKE_PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c "import numpy" >/dev/null 2>&1; then
    py=$cand
    break
  fi
done
if [ -z "$py" ]; then
  echo "python tests skipped: no python3 with numpy found (install python3-numpy; scripts/install-deps.sh does)"
  exit 77
fi
export ROCKE_LIB_DIR="$build" ROCKE_BIN="$build/rocke" PYTHONPATH="$here/..${PYTHONPATH:+:$PYTHONPATH}"
export ROCKE_CACHE_DIR="$build/python-test-cache" ROCKE_QUIET=1
exec "$py" -m unittest discover -s "$here" -p 'test_*.py' -v
