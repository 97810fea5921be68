#!/bin/bash
# CI's wheel step (tools/test.sh): builds the wheel (tools/build_wheel.sh: Abseil and protobuf
# linked statically) and the static host-harness C library, then runs python/tests/
# wheel_checks.py: auditwheel's tag, the exports (nm -D --defined-only), the needed libraries,
# the Python tests against the wheel installed in a fresh venv, imports beside torch, protobuf
# and onnxruntime, and examples/cmake against the static //capi:install_tree. Ends with
# "wheel: N passed, N failed" (both pytest runs' cases; "wheel-cp39: ..." with --python 3.9).
# Usage: test_wheel.sh [--python X.Y] [COUNTS_FILE]  (tools/test.sh passes its counts file)
# --python X.Y: the wheel of CPython X.Y (tools/build_wheel.sh --python), whose installed tests
# run in a Debian chroot of that CPython (tools/python_chroot.sh), imports beside torch aside.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
python=()
name=wheel
if [ "${1:-}" = --python ]; then
  python=(--python "$2")
  name="wheel-cp${2/./}"
  export MROPE_WHEEL_PYTHON="$2"
  shift 2
fi
start=$SECONDS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "=== $name: tools/build_wheel.sh${python[*]:+ ${python[*]}}, then python/tests/wheel_checks.py"
# The C library's CMake package too where nvcc is (its library needs the CUDA kernels).
c_targets=(//capi:libmrope_c_host.so)
[ -x "${CUDA_PATH:-/usr/local/cuda}/bin/nvcc" ] && c_targets+=(//capi:install_tree)
if wheel=$(tools/build_wheel.sh "${python[@]}") &&
   tools/static_bazel.sh build -c opt --config=quiet "${c_targets[@]}"; then
  echo "=== $name: built $wheel in $((SECONDS - start)) s"
  bin=$(tools/static_bazel.sh info -c opt bazel-bin 2>/dev/null)
  env=$(tools/python_env.sh --locate)
  tar=""
  [ ${#c_targets[@]} -gt 1 ] && tar="$bin/capi/mrope_c_install.tar"
  MROPE_WHEEL="$wheel" MROPE_C_HOST_LIBRARY="$bin/capi/libmrope_c_host.so" MROPE_PYENV="$env" \
    MROPE_C_INSTALL_TAR="$tar" MROPE_WHEEL_PYTEST_XML="$work/installed.xml" \
    "$env/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$work/checks.xml" \
    python/tests/wheel_checks.py
fi
python3 tools/test_summary.py --junit "$name" "$work/checks.xml" "$work/installed.xml" \
  ${1:+--counts "$1"}
status=$?
echo "=== $name: $((SECONDS - start)) s"
exit "$status"
