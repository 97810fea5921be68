#!/bin/bash
# The README's test command (and CI's): installs the build dependencies, then runs
#   1. every test                                  (bazel test --config=ci //...)
#   2. every test again under ASan + UBSan          (--config=asan)
#   3. the concurrency tests under TSan             (--config=tsan, tag "concurrency")
# offline, and ends with the line "N passed, N failed" counting the test cases of all three
# runs. Targets tagged own_sanitizer build with their own -fsanitize flags and are left out of
# runs 2 and 3. The C ABI's tests (//capi: the plain-C test, linkage checks), the CMake
# example built with cmake against the install tree (//examples/cmake) and mrope.cuda's tests
# on the host harness (//python:pytest_cuda_host, :pytest_cuda_torch_host) are Bazel tests,
# counted case by case. Exits non-zero on any failure. MROPE_TEST_QUICK=1 leaves out the ASan and
# TSan passes.
# Then examples/bazel_consumer, a workspace of its own depending on @mrope, is tested with its
# own Bazel server and output base, and the wheel is built (Abseil and protobuf from Debian's
# sources, linked statically: tools/build_static_deps.sh, cached) and checked, installed in a
# fresh venv (tools/test_wheel.sh), for CPython 3.11 here and for 3.9 and 3.13 in Debian
# chroots; their cases count in the same total.
set -uo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh --test || exit 1
counts=$(mktemp)
log=$(mktemp)
status=0

# run_pass NAME BAZEL_TEST_ARGS...: one bazel test run, summarised right away (bazel-testlogs
# points at the last run's configuration).
run_pass() {
  local name=$1
  shift
  local start=$SECONDS
  echo "=== $name: bazel test $*"
  bazel test --config=ci "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}  # 0 ok, 1 build failed, 3 tests failed, 4 no tests
  python3 tools/test_summary.py "$log" "$rc" --pass "$name" --counts "$counts" || status=1
  echo "=== $name: $((SECONDS - start)) s"
  [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] && status=1
}

# Tag "references": the differential tests against the installed transformers (first pass only).
no_own="--build_tag_filters=-own_sanitizer --test_tag_filters=-own_sanitizer,-references"
run_pass tests //...
if [ "${MROPE_TEST_QUICK:-0}" != 1 ]; then
  # shellcheck disable=SC2086
  run_pass asan --config=asan $no_own //...
  run_pass tsan --config=tsan --build_tag_filters=concurrency,-own_sanitizer \
    --test_tag_filters=concurrency,-own_sanitizer //...
fi
bazel shutdown >/dev/null 2>&1  # the server would otherwise idle for hours
examples/bazel_consumer/run_bazel_consumer_test.sh "$counts" || status=1
tools/test_wheel.sh "$counts" || status=1
# The wheels of the other CPythons Debian ships, each installed and tested in a chroot of its
# release (tools/python_chroot.sh, made once: ~1 min each; then ~50 s a run): bullseye's 3.9
# on glibc 2.31, older than the build's 2.36; trixie's 3.13.
for python in 3.9 3.13; do
  tools/test_wheel.sh --python "$python" "$counts" || status=1
done
python3 tools/test_summary.py --total "$counts" || status=1
rm -f "$log" "$counts"
exit "$status"
