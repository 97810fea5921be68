#!/bin/bash
# Runs Bazel for what mrope ships, with Abseil and protobuf linked statically (built once by
# tools/build_static_deps.sh, hidden inside each library by its version script), so the
# libraries need only glibc (2.34: the CUDA runtime's pthread and dl calls), libstdc++
# (GLIBCXX_3.4.29) and libgcc_s where they run: manylinux_2_34. libstdc++ stays shared: gcc
# 12's libstdc++.a needs glibc 2.36 (arc4random), its libgcc_eh.a 2.35 (_dl_find_object).
#   tools/static_bazel.sh build -c opt //capi:install_tree     # the CMake package
#   tools/static_bazel.sh info -c opt bazel-bin
# (tools/build_wheel.sh builds the wheel with it). It has an output base of its own, so the
# normal build (Debian's shared libraries; tests, ASan, TSan) keeps its outputs; actions come
# from the shared disk cache. It makes no bazel-* symlinks: `info bazel-bin` says where outputs
# are. Only the shipped targets link this way (the tests' gtest, benchmark, ... do not).
set -euo pipefail
cd "$(dirname "$0")/.."
static=$(tools/build_static_deps.sh)
command=$1
shift
# The server leaves soon after its last command (CI builds with it once).
exec bazel --output_base="$HOME/.cache/mrope-static-bazel/$(pwd | sha256sum | cut -c1-12)" \
  --max_idle_secs=120 "$command" --symlink_prefix=/ --repo_env=MROPE_STATIC_DEPS="$static" \
  --linkopt=-Wl,--gc-sections "$@"
