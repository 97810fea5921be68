#!/bin/bash
# Bazel sh_test: runs python/tests with pytest on the built extension, using the system
# python3 (Debian's python3-numpy, python3-pytest; python3-torch if installed). pytest writes
# one <testcase> per case to $XML_OUTPUT_FILE, which tools/test_summary.py counts.
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
# Under --config=asan the extension needs the sanitizer runtimes loaded first; python3 itself
# is not instrumented, so its allocations are not leak-checked.
preload=$(ldd "$root/$package/mrope/_mrope.so" | awk '/lib(asan|ubsan)\.so/ {print $3}' |
          paste -sd: -)
if [ -n "$preload" ]; then
  export LD_PRELOAD="$preload"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
cd "$TEST_TMPDIR"
exec python3 -m pytest -q -p no:cacheprovider --junitxml="$XML_OUTPUT_FILE" \
  "${tests[@]}" "$@"
