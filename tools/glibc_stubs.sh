#!/bin/bash
# Prints a directory to link the shipped libraries against instead of bookworm's glibc 2.36, so
# that they run on glibc >= 2.28 (manylinux_2_28; tools/static_bazel.sh passes it with -L):
#   libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 ld-linux-x86-64.so.2
#       stubs that export what glibc 2.28 exports, at 2.28's symbol versions: zig's (zig cc
#       makes them from glibc's ABI lists for any version; its pin is the ziglang line of
#       python/requirements-test.txt). A symbol's version is chosen at link time from the library defining it, so objects
#       compiled against glibc 2.36's headers bind to 2.28's versions (pthread_create@GLIBC_2.2.5
#       in libpthread, not @GLIBC_2.34 in libc), and what 2.28 lacks is an undefined symbol.
#   libc.so libm.so libpthread.so libdl.so librt.so
#       what gcc's -lc, -lm, ... find first (-L is searched before the system's directories).
#   libglibc_compat.a
#       tools/glibc_compat.c: the few functions newer than 2.28 that bookworm's libstdc++.a and
#       glibc headers reference (the manylinux toolchains' libstdc++_nonshared.a plays this role).
# Cached by the pins, this script, the compat source and gcc under
# ${MROPE_GLIBC_STUBS_CACHE:-~/.cache/mrope-glibc-stubs}; made once in about 1 min (zig's 100 MB
# wheel from the package index, or offline from the Python wheelhouse, ~/.cache/mrope-pyenv/wheels).
# `tools/glibc_stubs.sh --version` prints the glibc version (the wheel's manylinux tag).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
GLIBC=2.28
if [ "${1:-}" = --version ]; then
  echo "$GLIBC"
  exit 0
fi
pins=$(sed -n -E "s/^(ziglang==[^ #]+).*/\1/p" "$repo/python/requirements-test.txt")
compat="$repo/tools/glibc_compat.c"
key=$( (echo "$GLIBC"; echo "$pins"; cat "$0" "$compat"; gcc --version | head -1) |
      sha256sum | cut -c1-16)
cache="${MROPE_GLIBC_STUBS_CACHE:-$HOME/.cache/mrope-glibc-stubs}"
stubs="$cache/$key"
if [ -f "$stubs/libglibc_compat.a" ]; then
  echo "$stubs"
  exit 0
fi

mkdir -p "$cache"
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
{
  wheels="${MROPE_PYENV_CACHE:-$HOME/.cache/mrope-pyenv}/wheels"
  mkdir -p "$wheels"
  export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_ROOT_USER_ACTION=ignore
  pip=(/usr/bin/python3 -m pip install -q --no-index --find-links "$wheels" --target "$work/zig"
       "$pins")
  if ! "${pip[@]}" 2>/dev/null; then
    /usr/bin/python3 -m pip download -q -d "$wheels" "$pins"
    "${pip[@]}"
  fi
  # Any link with -lc ... against glibc $GLIBC makes the stubs (in zig's cache: copied out).
  echo 'int mrope_glibc_stubs(void) { return 0; }' >"$work/empty.c"
  ZIG_GLOBAL_CACHE_DIR="$work/zig-cache" ZIG_LOCAL_CACHE_DIR="$work/zig-cache" \
    "$work/zig/ziglang/zig" cc -target "x86_64-linux-gnu.$GLIBC" -shared -o "$work/empty.so" \
    "$work/empty.c" -lc -lm -lpthread -ldl -lrt
  staging="$work/stubs"
  mkdir -p "$staging"
  made=$(dirname "$(find "$work/zig-cache" -name libc.so.6)")
  for library in libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1; do
    cp "$made/$library" "$staging/"
    [ "$library" = libc.so.6 ] || ln -s "$library" "$staging/${library%.so.*}.so"  # libc.so: below
  done
  cp "$made/libld.so.2" "$staging/ld-linux-x86-64.so.2"  # zig's name for it; the soname is this
  # As the system's libc.so: libc_nonshared.a (atexit, pthread_atfork, ...: glibc 2.2.5's
  # symbols) is linked into the library itself.
  echo "GROUP ( $stubs/libc.so.6 /usr/lib/x86_64-linux-gnu/libc_nonshared.a" \
       "AS_NEEDED ( $stubs/ld-linux-x86-64.so.2 ) )" >"$staging/libc.so"
  gcc -c -O2 -fPIC -fvisibility=hidden -Wall -Werror -o "$work/glibc_compat.o" "$compat"
  ar rcs "$staging/libglibc_compat.a" "$work/glibc_compat.o"
  rm -rf "$stubs"
  mv "$staging" "$stubs"
} >&2
echo "$stubs"
