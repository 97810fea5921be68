#!/bin/bash
# Builds the Abseil and protobuf that the wheel and the C library link statically, from Debian's
# source packages of the versions installed (libabsl-dev, libprotobuf-dev: the headers the
# normal build uses), and prints the prefix that holds them:
#   <prefix>/include/{absl,google/protobuf}   headers (Abseil's inline namespace renamed, so
#                                              no symbol can meet Debian's absl::debian3)
#   <prefix>/lib/libabsl.a, libprotobuf.a     -fPIC, hidden visibility, one archive each
# Only what mrope links is built: Abseil's status, statusor, strings and str_format (and what
# they need), protobuf's full runtime (not protoc: the system protoc, the same version,
# generates mrope's code). Cached by source versions, compiler and this script's flags under
# ${MROPE_STATIC_DEPS_CACHE:-~/.cache/mrope-static-deps}; a cold build takes about 10 min on
# 2 cores. Needs a deb-src entry, dpkg-dev and ninja-build (tools/install_deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
absl_version=$(dpkg-query -W -f='${source:Version}' libabsl-dev)
protobuf_version=$(dpkg-query -W -f='${source:Version}' libprotobuf-dev)
# -ffunction-sections/-fdata-sections: the linker's --gc-sections drops what mrope does not use.
flags="-O2 -DNDEBUG -fPIC -fvisibility=hidden -fvisibility-inlines-hidden -ffunction-sections -fdata-sections"
absl_targets=(status statusor strings str_format_internal)  # Abseil's CMake names
# Bump RECIPE when the steps below change what is built.
RECIPE=1
key=$( (echo "$RECIPE $absl_version $protobuf_version $flags ${absl_targets[*]}"
        gcc --version | head -1) | sha256sum | cut -c1-16)
cache="${MROPE_STATIC_DEPS_CACHE:-$HOME/.cache/mrope-static-deps}"
prefix="$cache/$key"
if [ -f "$prefix/lib/libprotobuf.a" ] && [ -f "$prefix/lib/libabsl.a" ]; then
  echo "$prefix"
  exit 0
fi

mkdir -p "$cache"
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
jobs=$(nproc)
{
  cd "$work"
  apt-get source -qq --only-source "abseil=$absl_version" "protobuf=$protobuf_version"
  staging="$work/prefix"
  mkdir -p "$staging/lib" "$staging/include/google"

  absl_src=$(echo abseil-*/)
  sed -i 's/^#define ABSL_OPTION_INLINE_NAMESPACE_NAME .*/#define ABSL_OPTION_INLINE_NAMESPACE_NAME mrope_static/' \
    "$absl_src/absl/base/options.h"
  cmake -S "$absl_src" -B absl-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_STANDARD=17 -DABSL_PROPAGATE_CXX_STD=ON -DBUILD_TESTING=OFF \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags"
  cmake --build absl-build -j "$jobs" --target "${absl_targets[@]}"
  # One archive: the linker resolves references between members of one archive in any order.
  { echo "create $staging/lib/libabsl.a"
    find absl-build -name 'libabsl_*.a' | sort | sed 's/^/addlib /'
    echo save; echo end; } | ar -M
  (cd "$absl_src" && find absl -name '*.h' -o -name '*.inc' | tar -cf - -T -) | tar -xf - -C "$staging/include"

  protobuf_src=$(echo protobuf-*/)
  cmake -S "$protobuf_src" -B protobuf-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_STANDARD=17 -Dprotobuf_BUILD_TESTS=OFF -Dprotobuf_BUILD_SHARED_LIBS=OFF \
    -Dprotobuf_BUILD_PROTOC_BINARIES=OFF -Dprotobuf_WITH_ZLIB=OFF \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags"
  cmake --build protobuf-build -j "$jobs" --target libprotobuf
  cp protobuf-build/libprotobuf.a "$staging/lib/"
  (cd "$protobuf_src/src" &&
   find google/protobuf \( -name '*.h' -o -name '*.inc' -o -name '*.proto' \) \
     -not -path '*/testing/*' -not -name '*unittest*' | tar -cf - -T -) | tar -xf - -C "$staging/include"
  rm -rf "$prefix"
  mv "$staging" "$prefix"
} >&2
echo "$prefix"
