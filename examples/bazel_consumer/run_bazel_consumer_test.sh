#!/bin/bash
# Tests examples/bazel_consumer as its own Bazel workspace, with mrope as the external
# repository @mrope (README.md, "Depending on mrope from another Bazel project"), and
# summarises its test cases with tools/test_summary.py. Exits non-zero when the consumer does
# not build or a test fails.
# Usage: run_bazel_consumer_test.sh [COUNTS_FILE]  (tools/test.sh passes its counts file)
#
# The workspace keeps its own output base (warm between runs; its server is shut down at the
# end) and shares mrope's disk cache; --experimental_repository_disable_download keeps it
# offline as mrope's .bazelrc does.
set -uo pipefail
cd "$(dirname "$0")"
summary="$PWD/../../tools/test_summary.py"
consumer_bazel=(bazel --output_base="$HOME/.cache/mrope-bazel-consumer")
log=$(mktemp)
start=$SECONDS
echo "=== bazel_consumer: bazel test //... in examples/bazel_consumer"
"${consumer_bazel[@]}" test --disk_cache="$HOME/.cache/bazel-disk-cache" \
  --experimental_repository_disable_download --incompatible_strict_action_env \
  --nosandbox_debug --noshow_progress --curses=no --color=no --jobs=2 --keep_going \
  --test_output=errors //... 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# test_summary.py reads the test results under this workspace's bazel-testlogs.
python3 "$summary" "$log" "$rc" --pass bazel_consumer ${1:+--counts "$1"}
status=$?
"${consumer_bazel[@]}" shutdown
rm -f "$log"
echo "=== bazel_consumer: $((SECONDS - start)) s"
[ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] && status=1
exit "$status"
