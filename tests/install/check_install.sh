#!/bin/sh
# rocke tests — installs a build into a temporary prefix, checks what landed
# (SONAME, exported symbols, headers, CLI), then builds and runs examples/
# against the installed tree with pkg-config and with find_package(rocke).
# Usage: check_install.sh BUILD_DIR SOURCE_DIR [EXTRA_CFLAGS]. Layer: tests.
set -eu
build=$1
src=$2
extra=${3:-}
. "$(dirname "$0")/require_tools.sh"
require_tools install cmake pkg-config make
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
lib=$(find "$prefix" -name 'librocke.so.0.*' -type f)
[ -n "$lib" ] || fail "no librocke.so.0.* under the prefix"
libdir=$(dirname "$lib")
for f in "$libdir/librocke.so" "$libdir/librocke.a" "$libdir/pkgconfig/rocke.pc" "$libdir/cmake/rocke/rocke-config.cmake" \
         "$prefix/bin/rocke" "$prefix/include/rocke/rocke.h" "$prefix/include/rocke/ops.def" "$prefix/include/rocke/atoms.def"; do
  [ -e "$f" ] || fail "missing after install: ${f#"$prefix"/}"
done
if command -v readelf >/dev/null 2>&1; then
  readelf -d "$lib" | grep -q 'SONAME.*\[librocke\.so\.0\]' || fail "librocke SONAME is not librocke.so.0"
fi
if command -v nm >/dev/null 2>&1; then
  leaked=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ && $3 !~ /^rk_/ && $3 != "ROCKE_0" {print $3}' | head -5)
  [ -z "$leaked" ] || fail "librocke.so exports non-API symbols: $leaked"
  nm -D --defined-only --with-symbol-versions "$lib" | grep -q 'rk_kernel_new@@ROCKE_0' || fail "rk_kernel_new is not versioned ROCKE_0"
fi
"$prefix/bin/rocke" --help >/dev/null 2>&1 || fail "installed rocke CLI does not run"

# pkg-config, with the .pc file found from PKG_CONFIG_PATH alone.
mkdir "$tmp/pc"
PKG_CONFIG_PATH=$libdir/pkgconfig make -s -C "$src/examples" OUT="$tmp/pc" CFLAGS="-O1 -Wall -Wextra -Werror $extra" \
  LDFLAGS="$extra" || fail "pkg-config build of examples/"
LD_LIBRARY_PATH=$libdir "$tmp/pc/embed_saxpy" gfx942 || fail "pkg-config build of embed_saxpy failed its check"
LD_LIBRARY_PATH=$libdir ldd "$tmp/pc/embed_saxpy" 2>/dev/null | grep -q "$libdir/librocke.so.0" ||
  fail "pkg-config build did not load the installed librocke.so.0"

# CMake, with the package found from CMAKE_PREFIX_PATH alone.
cmake -S "$src/examples" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="-Wall -Werror $extra" \
  -DCMAKE_EXE_LINKER_FLAGS="$extra" >"$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log"; fail "cmake configure of examples/"; }
cmake --build "$tmp/cm" >>"$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log"; fail "cmake build of examples/"; }
"$tmp/cm/embed_saxpy" sm_90a || fail "CMake build of embed_saxpy failed its check"

# An unwritable prefix is refused with a message naming it (run as an
# unprivileged user when this test runs as root, who may write anywhere).
mkdir "$tmp/ro"
chmod 555 "$tmp/ro" "$tmp"
as_user=""
if [ "$(id -u)" = 0 ]; then
  if command -v setpriv >/dev/null 2>&1; then
    as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
  else
    echo "note: running as root without setpriv; unwritable-prefix check skipped"
  fi
fi
if [ "$(id -u)" != 0 ] || [ -n "$as_user" ]; then
  if $as_user sh "$src/scripts/check-install-prefix.sh" "" "$tmp/ro/usr" 2>"$tmp/ro.err"; then
    chmod 755 "$tmp"; fail "an unwritable prefix was accepted"
  fi
  chmod 755 "$tmp"
  grep -q "cannot install into $tmp/ro/usr: $tmp/ro is not writable" "$tmp/ro.err" ||
    { cat "$tmp/ro.err"; fail "unwritable prefix message"; }
fi
chmod 755 "$tmp"
echo "install test passed: $prefix (pkg-config and CMake builds of examples/ ran)"
