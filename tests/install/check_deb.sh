#!/bin/sh
# rocke tests — builds the Debian package (CPack), checks its contents and
# control fields, then installs and removes it in a private dpkg database
# and root (never the system's), checking that every file comes and goes.
# Usage: check_deb.sh BUILD_DIR. Layer: tests.
set -eu
build=$1
. "$(dirname "$0")/require_tools.sh"
require_tools package cpack dpkg-deb dpkg
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cpack --config "$build/CPackConfig.cmake" -G DEB -D CPACK_DEBIAN_COMPRESSION_TYPE=none -B "$tmp/out" >"$tmp/cpack.log" 2>&1 || { cat "$tmp/cpack.log"; fail "cpack"; }
deb=$(ls "$tmp"/out/rocke_*.deb)
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./||' >"$tmp/files"
for f in usr/lib/librocke.so.0 usr/lib/librocke.so usr/lib/librocke.a usr/bin/rocke usr/include/rocke/rocke.h \
         usr/include/rocke/ops.def usr/lib/pkgconfig/rocke.pc usr/lib/cmake/rocke/rocke-config.cmake; do
  grep -qx "$f" "$tmp/files" || fail "package lacks $f"
done
[ "$(dpkg-deb -f "$deb" Package)" = rocke ] || fail "package name"
dpkg-deb -f "$deb" Depends | grep -q libxxhash || fail "Depends lacks the shared libraries librocke needs"

# Install and remove in a private instdir/admindir; dependencies live in the
# system database, not this one, hence --force-depends. A stub ldconfig on
# PATH stands in for the system's (the maintainer scripts call it).
root=$tmp/root
admin=$tmp/admin
mkdir -p "$root" "$admin/updates" "$admin/info" "$tmp/bin"
: >"$admin/status"
printf '#!/bin/sh\necho called >>"%s"\n' "$tmp/ldconfig.calls" >"$tmp/bin/ldconfig"
chmod +x "$tmp/bin/ldconfig"
dpkg_private() {
  PATH=$tmp/bin:$PATH dpkg --force-not-root --force-depends --force-script-chrootless \
    --instdir="$root" --admindir="$admin" --log=/dev/null "$@"
}
dpkg_private -i "$deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -i"; }
for f in usr/lib/librocke.so.0.1.0 usr/bin/rocke usr/include/rocke/ops.def usr/lib/pkgconfig/rocke.pc; do
  [ -e "$root/$f" ] || fail "dpkg -i did not install $f"
done
dpkg_private -s rocke | grep -q '^Status: install ok installed' || fail "dpkg does not list rocke as installed"
[ -s "$tmp/ldconfig.calls" ] || fail "postinst did not run ldconfig"
dpkg_private -r rocke >>"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -r"; }
left=$(find "$root" -type f -o -type l | head -5)
[ -z "$left" ] || fail "dpkg -r left files: $left"
echo "package test passed: $(basename "$deb") installs and removes cleanly"
