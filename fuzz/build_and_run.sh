#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (-fsanitize=fuzzer,address,undefined) outside Bazel
# and runs each one for a given time. See fuzz/FUZZING.md.
#
#   fuzz/build_and_run.sh [-t SECONDS] [-b] [TARGET...]
#     -t SECONDS  run time per target (default 60)
#     -b          build only
#     TARGET      positions_fuzzer, request_json_fuzzer, ... (default: all)
#
# Environment: CXX (default clang++), FUZZ_WORK (default fuzz/corpus-work, git-ignored),
# FUZZ_ARGS (extra libFuzzer flags). Each target runs single-process (-jobs/-workers unset) on
# $FUZZ_WORK/corpus/TARGET, seeded from fuzz/corpus/TARGET and tests/regression/crashers/TARGET;
# crashes land in $FUZZ_WORK/artifacts/TARGET/, logs in $FUZZ_WORK/logs/TARGET.log. The last line
# of output per target is "TARGET: N executions in S s".
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
CXX=${CXX:-clang++}
WORK=${FUZZ_WORK:-$ROOT/fuzz/corpus-work}
SECONDS_PER_TARGET=60
BUILD_ONLY=0
while getopts "t:b" opt; do
  case $opt in
    t) SECONDS_PER_TARGET=$OPTARG ;;
    b) BUILD_ONLY=1 ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))

# Library sources per target (the fuzz target's own .cc is fuzz/TARGET.cc).
# //mrope/positions is every .cc of its directory (a hand-kept list fell behind twice).
POSITIONS=$(echo mrope/positions/*.cc)
# The model layer's family table, which presets and config loading read (same reason).
MODEL=$(echo mrope/model/*.cc)
JSON="mrope/common/json.cc mrope/common/json_reader.cc mrope/common/json_writer.cc"
ROTARY="mrope/rotary/rope_params.cc mrope/rotary/rope_config.cc mrope/rotary/axis_map.cc"
SERVICE="$POSITIONS $MODEL $JSON $ROTARY mrope/rotary/apply.cc mrope/rotary/cos_sin_table.cc mrope/rotary/heads_overlap.cc
  mrope/rotary/dtype_storage.cc mrope/rotary/half_float.cc
  mrope/service/position_service.cc mrope/service/proto_convert.cc mrope/service/model_spec.cc
  mrope/service/request_io.cc mrope/service/textproto.cc
  $WORK/gen/proto/mrope.pb.cc"
declare -A SOURCES=(
  [positions_fuzzer]="$POSITIONS $MODEL"
  [request_json_fuzzer]="$SERVICE mrope/service/case_model.cc mrope/service/response_json.cc"
  [service_request_fuzzer]="$SERVICE"
  [config_json_fuzzer]="$SERVICE"
  [rope_params_fuzzer]="mrope/rotary/rope_params.cc mrope/rotary/axis_map.cc"
  [kernel_args_fuzzer]="kernels/mrope_kernel_validate.cc kernels/fused_kernel_validate.cc
    kernels/internal/arg_checks.cc kernels/internal/fused_launch_plan.cc kernels/launch_plan.cc
    mrope/rotary/heads_overlap.cc"
)
ALL_TARGETS=(positions_fuzzer request_json_fuzzer service_request_fuzzer config_json_fuzzer
  rope_params_fuzzer kernel_args_fuzzer)
TARGETS=("$@")
[[ ${#TARGETS[@]} -eq 0 ]] && TARGETS=("${ALL_TARGETS[@]}")

SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  -fsanitize-ignorelist=$ROOT/fuzz/ubsan_ignorelist.txt"
# MROPE_NO_IFUNC: no target_clones under sanitizers (mrope/positions/cpu_clones.h: an IFUNC
# resolver runs before the sanitizer runtime is set up), as in .bazelrc's asan config.
CXXFLAGS="-std=c++17 -O1 -g -I$ROOT -I$WORK/gen $SANITIZE -ffp-contract=off -DMROPE_NO_IFUNC
  -Wno-deprecated-declarations"
ABSL_MODULES="absl_status absl_statusor absl_strings absl_str_format absl_span"
LIBS="$(pkg-config --libs $ABSL_MODULES) -lprotobuf -pthread"

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
mkdir -p "$WORK"/{obj,bin,logs,gen}
# Generated protobuf code for the service targets (Bazel's cc_proto_library does this there).
if [[ ! -f $WORK/gen/proto/mrope.pb.cc || proto/mrope.proto -nt $WORK/gen/proto/mrope.pb.cc ]]; then
  protoc --cpp_out="$WORK/gen" proto/mrope.proto
fi

# Compiles SRC to an object (fuzzer-no-link instrumentation) unless it is up to date.
compile() {
  local src=$1 obj="$WORK/obj/$(basename "$(dirname "$1")")_$(basename "$1").o"
  if [[ ! -f $obj || $src -nt $obj ||
        -n $(find mrope fuzz kernels "$WORK/gen" -name '*.h' -newer "$obj" -print -quit) ]]; then
    $CXX $CXXFLAGS -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
  fi
  echo "$obj"
}

build() {
  local target=$1 objs=()
  for src in ${SOURCES[$target]} "fuzz/$target.cc"; do objs+=("$(compile "$src")"); done
  $CXX $CXXFLAGS -fsanitize=fuzzer "${objs[@]}" $LIBS -o "$WORK/bin/$target"
}

run() {
  local target=$1 corpus="$WORK/corpus/$target" artifacts="$WORK/artifacts/$target/"
  local log="$WORK/logs/$target.log"
  mkdir -p "$corpus" "$artifacts"
  # The JSON targets get a dictionary of JSON tokens, mrope's keys and edge-case numbers.
  local dict=()
  [[ $target == *json* || $target == service_request_fuzzer ]] && dict=(-dict=fuzz/json.dict)
  local seeds=()
  for dir in "fuzz/corpus/$target" "tests/regression/crashers/$target"; do
    [[ -d $dir ]] && seeds+=("$dir")
  done
  # -rss_limit_mb: the largest legitimate input the targets build stays far below it.
  local start=$SECONDS
  "$WORK/bin/$target" -max_total_time="$SECONDS_PER_TARGET" -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts" "${dict[@]}" ${FUZZ_ARGS:-} \
    "$corpus" "${seeds[@]}" >"$log" 2>&1 || true
  local execs
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  local finding=none
  grep -q -E "^(==[0-9]+==ERROR|SUMMARY: |.*FUZZ_CHECK)" "$log" && finding=yes
  echo "$target: ${execs:-0} executions in $((SECONDS - start)) s (log: $log)"
  # One line per run, for fuzz/FUZZING.md: date, target, executions, seconds, finding.
  printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$target" "${execs:-0}" \
    "$((SECONDS - start))" "$finding" >>"$WORK/runs.tsv"
  if [[ $finding == yes ]]; then
    echo "$target: FINDING, see $log and $artifacts" >&2
    return 1
  fi
}

status=0
for target in "${TARGETS[@]}"; do
  build "$target"
  [[ $BUILD_ONLY -eq 1 ]] || run "$target" || status=1
done
exit $status
