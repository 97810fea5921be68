#!/bin/bash
# Builds the Python package's wheel into dist/: dist/mrope-<version>-cp3X-cp3X-linux_x86_64.whl,
# for Debian's python3 (the interpreter the extension is built against; $MROPE_PYTHON names
# another). Installs its build dependencies first, like the other tools/ scripts. Install it
# offline with:  python3 -m pip install dist/mrope-*.whl
# The wheel links Debian's shared Abseil and protobuf (libabsl-dev, libprotobuf-dev or their
# runtime packages; rapidjson is header-only) and needs python3-numpy; see python/wheel.py.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
python="${MROPE_PYTHON:-/usr/bin/python3}"
version=$(sed -n 's/^ *version = "\(.*\)",$/\1/p' MODULE.bazel | head -1)
bazel build -c opt --config=quiet //python:mrope/_mrope.so
"$python" python/wheel.py --extension bazel-bin/python/mrope/_mrope.so --version "$version" \
  --out dist
