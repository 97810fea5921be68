#!/bin/bash
# Installs what building and testing mrope needs on Debian bookworm (idempotent: a no-op when
# everything is present). CUDA is optional: nvcc comes from /usr/local/cuda when the machine
# has it; without it the CUDA targets are skipped. The Python package (python/) needs
# pybind11-dev and python3-dev to build, python3-venv and python3-pip for its test environment
# and python3-numpy for its wheel test (a venv that sees Debian's numpy). The Python tests run in
# the pinned environment of python/requirements-test.txt (torch, numpy, pytest and the
# references: transformers, vLLM), which tools/python_env.sh makes from the package index once
# and keeps under ~/.cache/mrope-pyenv (offline afterwards); only with --test (tools/test.sh), so
# that the demo, the wheel build and the GPU bundle do not download the references (3.3 GB).
# cmake builds the C ABI's CMake example (examples/cmake) against its install tree.
# The shipped libraries link Abseil and protobuf built from Debian's source packages
# (tools/build_static_deps.sh: apt-get source, hence a deb-src entry beside each deb one,
# dpkg-dev to unpack, ninja-build for cmake).
set -euo pipefail
packages=(bazel-bootstrap libabsl-dev libprotobuf-dev protobuf-compiler libgtest-dev
          libgmock-dev libbenchmark-dev rapidjson-dev pkg-config python3
          pybind11-dev python3-dev python3-numpy python3-venv python3-pip cmake
          dpkg-dev ninja-build)
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
deb_src=/etc/apt/sources.list.d/mrope-deb-src
if [ ! -e "$deb_src.sources" ] && [ ! -e "$deb_src.list" ] &&
   ! grep -rqsE '^(deb-src |Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then  # deb822 (Debian 12's images)
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
      "${sudo_cmd[@]}" tee "$deb_src.sources" >/dev/null
  else
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list | "${sudo_cmd[@]}" tee "$deb_src.list" >/dev/null
  fi
  "${sudo_cmd[@]}" apt-get update -qq
fi
if ! dpkg -s "${packages[@]}" >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi
if [ "${1:-}" = --test ]; then
  "$(dirname "$0")/python_env.sh" >/dev/null
fi
