#!/bin/bash
# Builds the Python package's wheel into dist/: dist/mrope-<version>-cp3X-cp3X-linux_x86_64.whl,
# for Debian's python3 (the interpreter the extension is built against; $MROPE_PYTHON names
# another). Installs its build dependencies first, like the other tools/ scripts. Install it
# offline with:  python3 -m pip install dist/mrope-*.whl
# The wheel links Debian's shared Abseil and protobuf (libabsl-dev, libprotobuf-dev or their
# runtime packages; rapidjson is header-only) and needs python3-numpy; see python/wheel.py.
# With a CUDA toolkit it also carries mrope/libmrope_c.so (the C ABI, for mrope.cuda).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
python="${MROPE_PYTHON:-/usr/bin/python3}"
version=$(sed -n 's/^ *version = "\(.*\)",$/\1/p' MODULE.bazel | head -1)
c_library=()
if [ -x "${CUDA_PATH:-/usr/local/cuda}/bin/nvcc" ]; then  # the C ABI needs the CUDA kernels
  bazel build -c opt --config=quiet //python:mrope/_mrope.so //capi:libmrope_c.so
  c_library=(--c-library bazel-bin/capi/libmrope_c.so)
else
  bazel build -c opt --config=quiet //python:mrope/_mrope.so
fi
"$python" python/wheel.py --extension bazel-bin/python/mrope/_mrope.so "${c_library[@]}" \
  --version "$version" --out dist
