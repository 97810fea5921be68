#!/bin/bash
# Unpacks the C ABI's install tree, builds examples/cmake against it with CMake (as a user of
# the installed package would: find_package(mrope CONFIG)) and runs the example.
# Usage: run_cmake_example_test.sh INSTALL_TAR EXAMPLE_DIR
set -euo pipefail
tar=$(realpath "$1") source_dir=$(realpath "$2")
work="${TEST_TMPDIR:-$(mktemp -d)}"
mkdir -p "$work/prefix"
tar -C "$work/prefix" -xf "$tar"
cmake -S "$source_dir" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
# A sanitizer build of the library (tools/test.sh's ASan pass) needs its runtime loaded first.
preload=$(ldd "$work/prefix/lib/libmrope_c.so" | awk '/lib(asan|ubsan)\.so/ {print $3}' |
          paste -sd: -)
output=$(LD_PRELOAD="$preload" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
         "$work/build/mrope_cmake_example")
echo "$output"
expected="w: 0 1 2 3 4 5 4 5 6 7 8"
grep -qx "$expected" <<< "$output" || { echo "missing line: $expected"; exit 1; }
grep -qx "delta: -2" <<< "$output" || { echo "missing line: delta: -2"; exit 1; }
