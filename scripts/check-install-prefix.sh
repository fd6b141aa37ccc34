#!/bin/sh
# rocke — `make install` guard: refuse an install directory this user cannot
# write, naming it and the ways out, before cmake fails half-way.
# Usage: check-install-prefix.sh DESTDIR PREFIX
destdir=$1
prefix=$2
case $prefix in
  /*) ;;
  *) echo "rocke: PREFIX must be an absolute path, got '$prefix'" >&2; exit 2 ;;
esac
dir=$destdir$prefix
# The nearest directory that exists is the one the install has to write into.
probe=$dir
while [ ! -d "$probe" ]; do
  if [ -e "$probe" ]; then
    echo "rocke: cannot install into $dir: $probe exists and is not a directory" >&2
    exit 2
  fi
  probe=$(dirname "$probe")
done
# An existing prefix may still hold a subdirectory the user cannot write.
if [ "$probe" = "$dir" ]; then
  for sub in bin include lib; do
    if [ -d "$dir/$sub" ] && [ ! -w "$dir/$sub" ]; then probe=$dir/$sub; break; fi
  done
fi
if [ ! -w "$probe" ] || [ ! -x "$probe" ]; then
  echo "rocke: cannot install into $dir: $probe is not writable by $(id -un)." >&2
  echo "  Choose a prefix you own (make install PREFIX=\$HOME/.local), stage with DESTDIR=DIR," >&2
  echo "  or run the install as root (sudo make install PREFIX=$prefix)." >&2
  exit 2
fi
