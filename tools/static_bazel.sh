#!/bin/bash
# Runs Bazel for what mrope ships, linked so that it needs only glibc >= 2.28 and libgcc_s where
# it runs (manylinux_2_28): Abseil and protobuf statically (built once by
# tools/build_static_deps.sh), libstdc++ statically (-l:libstdc++.a), all of them hidden inside
# each library by its version script; and against glibc 2.28's ABI instead of bookworm's 2.36
# (tools/glibc_stubs.sh: -L finds its stubs before the system's libc.so, libm.so, ...), so every
# glibc symbol binds to a version 2.28 has (pthread_create@GLIBC_2.2.5 in libpthread, not
# @GLIBC_2.34 in libc), and libglibc_compat.a (tools/glibc_compat.c) supplies what gcc 12's
# libstdc++.a references that 2.28 lacks. Only the link targets 2.28: the compile stays gcc 12
# with glibc 2.36's headers. libgcc_s stays shared (gcc 12's libgcc_eh.a needs
# glibc 2.35's _dl_find_object; libgcc_s.so.1 is on every manylinux system).
#   tools/static_bazel.sh build -c opt //capi:install_tree     # the CMake package
#   tools/static_bazel.sh info -c opt bazel-bin
# (tools/build_wheel.sh builds the wheel with it). It has an output base of its own, so the
# normal build (Debian's shared libraries; tests, ASan, TSan) keeps its outputs; actions come
# from the shared disk cache. It makes no bazel-* symlinks: `info bazel-bin` says where outputs
# are. Only the shipped targets link this way (the tests' gtest, benchmark, ... do not).
set -euo pipefail
cd "$(dirname "$0")/.."
static=$(tools/build_static_deps.sh)
stubs=$(tools/glibc_stubs.sh)
command=$1
shift
# The server leaves soon after its last command (CI builds with it once).
exec bazel --output_base="$HOME/.cache/mrope-static-bazel/$(pwd | sha256sum | cut -c1-12)" \
  --max_idle_secs=120 "$command" --symlink_prefix=/ --repo_env=MROPE_STATIC_DEPS="$static" \
  --linkopt=-Wl,--gc-sections --linkopt=-L"$stubs" \
  --repo_env=BAZEL_LINKLIBS="-l%:libstdc++.a:$stubs/libglibc_compat.a:-lm:-lpthread:-ldl:-lrt" \
  "$@"
