#!/bin/bash
# Runs an example binary ($1) and checks that its output contains $2.
set -euo pipefail
output="$("$1")"
echo "$output"
if ! grep -qF -- "$2" <<<"$output"; then
  echo "FAIL: the output of $1 lacks: $2" >&2
  exit 1
fi
