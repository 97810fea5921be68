#!/bin/bash
# Installs what building and testing mrope needs on Debian bookworm (idempotent: a no-op when
# everything is present). CUDA is optional: nvcc comes from /usr/local/cuda when the machine
# has it; without it the CUDA targets are skipped. The Python package (python/) needs
# pybind11-dev and python3-dev to build, python3-numpy and python3-pytest to test, and
# python3-venv and python3-pip for its wheel test, and python3-torch (Debian's 1.13) so that the
# torch paths run in CI: torch tensors in and out, mrope.cuda's DLPack path and apply_mrope's
# autograd against a plain fp64 torch rotation (without torch those tests skip; custom ops and
# torch.compile need torch >= 2.4 and skip on 1.13).
# cmake builds the C ABI's CMake example (examples/cmake) against its install tree.
set -euo pipefail
packages=(bazel-bootstrap libabsl-dev libprotobuf-dev protobuf-compiler libgtest-dev
          libgmock-dev libbenchmark-dev rapidjson-dev pkg-config python3
          pybind11-dev python3-dev python3-numpy python3-pytest python3-venv python3-pip
          python3-torch cmake)
if ! dpkg -s "${packages[@]}" >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi
