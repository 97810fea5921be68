#!/bin/bash
# Runs Bazel for what mrope ships, with Abseil and protobuf linked statically (built once by
# tools/build_static_deps.sh, hidden inside each library by its version script) and libstdc++
# and libgcc linked statically too, so the libraries need only glibc where they run:
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
  --linkopt=-static-libstdc++ --linkopt=-static-libgcc --linkopt=-Wl,--gc-sections "$@"
