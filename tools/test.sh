#!/bin/bash
# The README's test command (and CI's): installs the build dependencies, runs every test
# offline, and ends with the line "N passed, N failed". Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh || exit 1
log=$(mktemp)
bazel test --config=ci //... 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}  # 0 ok, 1 build failed, 3 tests failed, 4 no tests
bazel shutdown >/dev/null 2>&1  # the server would otherwise idle for hours
python3 tools/test_summary.py "$log" "$rc"
summary_rc=$?
rm -f "$log"
[ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] && exit "$rc"
exit "$summary_rc"
