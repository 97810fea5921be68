#!/bin/bash
# Bazel sh_test: runs python/tests with pytest on the built extension, using the pinned test
# environment's python (tools/python_env.sh: a venv of Debian's python3 with torch, numpy,
# pytest and the references of python/requirements-test.txt). pytest writes one <testcase> per
# case to $XML_OUTPUT_FILE, which tools/test_summary.py counts.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
export MROPE_REPO_DIR="$root"
# --package=DIR: the package under test (default python/; python/host for the host-harness
# kernels); then the test files (relative to python/; default all of python/tests) and pytest
# options.
package=python
if [[ "${1:-}" == --package=* ]]; then
  package=${1#--package=}
  shift
fi
tests=()
while [[ "${1:-}" == tests/* ]]; do
  tests+=("$root/python/$1")
  shift
done
if [ ${#tests[@]} -eq 0 ]; then
  tests=("$root/python/tests")
fi
export PYTHONPATH="$root/$package:$root/python/tests"
# The test environment's directory (its targets/ hold the other reference versions).
MROPE_PYENV=$("$root/tools/python_env.sh" --locate)
export MROPE_PYENV
# Under --config=asan the extension needs the sanitizer runtimes loaded first; python3 itself
# is not instrumented, so its allocations are not leak-checked.
preload=$(ldd "$root/$package/mrope/_mrope.so" | awk '/lib(asan|ubsan)\.so/ {print $3}' |
          paste -sd: -)
if [ -n "$preload" ]; then
  export LD_PRELOAD="$preload"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
cd "$TEST_TMPDIR"
exec "$MROPE_PYENV/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$XML_OUTPUT_FILE" \
  "${tests[@]}" "$@"
