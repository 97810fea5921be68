#!/bin/bash
# The GPU check of the kernel, run from the bundle that tools/gpu_bundle.sh builds (see
# kernels/BENCHMARKS.md, "The GPU check in one command"):
#   run.sh [REPORT_DIR]        (default: report/ in the bundle)
# Steps: the kernel tests, the benchmarks (the M-RoPE kernel, then the fused kernel), the C
# ABI's test (c_abi.log) and mrope.cuda's device tests (python_cuda.log, with torch or CuPy),
# compute-sanitizer memcheck / racecheck / synccheck / initcheck on a subset that covers every
# kernel path on small shapes. REPORT_DIR gets report.md plus tests.xml, tests.log,
# sanitizers.log, benchmark.json, benchmark.log, fused_benchmark.json, fused_benchmark.log.
# Without a CUDA device it only smoke-runs the test binary, writes a report saying
# "no CUDA device" and exits 0. Otherwise it exits 1 if any step failed or a target was missed.
set -uo pipefail  # no -e: a failing step must not stop the later ones

bundle=$(cd "$(dirname "$0")" && pwd)
out=${1:-$bundle/report}
mkdir -p "$out" && out=$(cd "$out" && pwd)
# `env -i` leaves no PATH; the CUDA tools live in /usr/local/cuda/bin when not on PATH.
export PATH="${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}:/usr/local/cuda/bin"
step_timeout=${MROPE_STEP_TIMEOUT:-240}  # seconds; a hang must not eat the whole session
test_bin=$bundle/bin/mrope_kernel_test
bench_bin=$bundle/bin/mrope_kernel_benchmark
fused_bench_bin=$bundle/bin/fused_kernel_benchmark
# Every kernel path on small shapes: path variants, device-side errors, the T = 17 grid
# cases, graph capture (kernels/BENCHMARKS.md, "Sanitizers").
sanitizer_filter='*Fused*:*KernelPathTest*:*KernelErrorTest*:*T17_*:*KernelGraphTest*:*KernelLaunchTest*:*KernelLoopTest.BlocksLoopOverTokenGroups*'

state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
rm -f "$out"/report.md "$out"/tests.xml "$out"/tests.log "$out"/sanitizers.log \
  "$out"/benchmark.json "$out"/benchmark.log "$out"/fused_benchmark.json "$out"/fused_benchmark.log \
  "$out"/c_abi.xml "$out"/c_abi.log "$out"/python_cuda.log

meta() { printf '%s\t%s\n' "$1" "$2" >>"$state/meta.tsv"; }
step_done() {  # NAME EXIT_CODE [DETAIL]; then refresh the report (a cut-off run keeps one)
  printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}" >>"$state/steps.tsv"
  python3 "$bundle/report.py" "$bundle" "$state" "$out" >/dev/null
}
find_tool() {  # the newest NAME on PATH, in CUDA toolkits or under /opt/nvidia
  command -v "$1" && return
  find /usr/local/cuda*/ /opt/nvidia/ -maxdepth 6 -name "$1" -type f -perm -u+x 2>/dev/null |
    sort -V | tail -n 1 | grep .
}
clip() {  # FILE: whole, or its first 3 MiB and last lines (a returned file may hold 16 MiB)
  if [ "$(stat -c %s "$1")" -le $((3 << 20)) ]; then
    cat "$1"
  else
    head -c $((3 << 20)) "$1"
    printf '\n[... cut by run.sh ...]\n'
    tail -n 20 "$1"
  fi
}
run_tests() {  # extra gtest flags; tests.xml and tests.log in $out
  timeout "$step_timeout" "$test_bin" --gtest_output="xml:$out/tests.xml" "$@" >"$out/tests.log" 2>&1
}

if ! command -v python3 >/dev/null; then
  echo "run.sh: python3 is needed to write the report" >&2
  exit 1
fi
meta date "$(date -u +%Y-%m-%dT%H:%M:%SZ)"

# A device is there when nvidia-smi lists one, or (no usable nvidia-smi) when the CUDA runtime
# sees one: the benchmark prints its no-device message before anything else.
if ! command -v nvidia-smi >/dev/null; then
  smi="nvidia-smi not found"
elif gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1) && [ -n "$gpu" ]; then
  smi=ok
else
  smi="nvidia-smi: $(head -n 1 <<<"$gpu")"
fi
if [ "$smi" = ok ]; then
  gpu=$(head -n 1 <<<"$gpu")
  meta device "${gpu%,*}"
  meta driver "${gpu##*, }"
  meta driver_cuda "$(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p')"
elif probe=$("$bench_bin" --benchmark_list_tests=true 2>&1) && ! grep -q "no CUDA device" <<<"$probe"; then
  meta driver "? ($smi)"
else
  meta no_device "$smi; $(head -n 1 <<<"$probe")"
  run_tests  # smoke run: the binary loads and its host tests pass; GPU tests skip
  step_done tests $?
  python3 "$bundle/report.py" "$bundle" "$state" "$out"
  rc=$?
  cat "$out/report.md"
  echo "run.sh: no CUDA device on this machine; nothing measured. Report: $out/report.md"
  exit $rc
fi

if cuobjdump=$(find_tool cuobjdump); then  # which SASS and PTX the binaries carry
  meta gpu_code "$("$cuobjdump" --list-elf --list-ptx "$test_bin" 2>/dev/null |
    grep -o 'sm_[0-9a-z]*\.\(cubin\|ptx\)' | sort -u | tr '\n' ' ')"
fi

echo "run.sh: kernel tests"
MROPE_REQUIRE_GPU=1 run_tests  # a GPU test that skips is a failure here
step_done tests $?

# Before the sanitizers: the slowest steps come last, so a run cut off still has the figures.
echo "run.sh: benchmark"
timeout "$step_timeout" "$bench_bin" --benchmark_out="$out/benchmark.json" \
  --benchmark_out_format=json --benchmark_counters_tabular=true >"$out/benchmark.log" 2>&1
step_done benchmark $?

echo "run.sh: fused kernel benchmark"
timeout "$step_timeout" "$fused_bench_bin" --benchmark_out="$out/fused_benchmark.json" \
  --benchmark_out_format=json --benchmark_counters_tabular=true >"$out/fused_benchmark.log" 2>&1
step_done fused_benchmark $?

echo "run.sh: C ABI test"
XML_OUTPUT_FILE="$out/c_abi.xml" timeout "$step_timeout" "$bundle/bin/mrope_c_device_test" \
  --device >"$out/c_abi.log" 2>&1
step_done c_abi $? "$(tail -n 1 "$out/c_abi.log")"

# mrope.cuda on the device with this machine's python3 and whichever of torch / CuPy it has
# (none: the cases skip and the step passes, saying so).
echo "run.sh: mrope.cuda tests"
PYTHONPATH="$bundle/python" MROPE_C_LIBRARY="$bundle/lib/libmrope_c.so" timeout "$step_timeout" \
  python3 "$bundle/python/tests/test_cuda_device.py" >"$out/python_cuda.log" 2>&1
rc=$?
meta python_stack "$(python3 --version 2>&1), $(sed -n 's/^mrope.cuda device tests: //p' \
  "$out/python_cuda.log" | head -n 1)"
step_done python_cuda $rc "$(tail -n 1 "$out/python_cuda.log")"

if sanitizer=$(find_tool compute-sanitizer); then
  meta sanitizer "$sanitizer ($("$sanitizer" --version | grep -o 'Version [^ ]*' | head -n 1))"
fi
for tool in memcheck racecheck synccheck initcheck; do
  if [ -z "${sanitizer:-}" ]; then
    step_done "$tool" 127 "compute-sanitizer not found (PATH, /usr/local/cuda*, /opt/nvidia)"
    continue
  fi
  echo "run.sh: compute-sanitizer --tool $tool"
  options=(--tool "$tool" --error-exitcode 1)
  filter=$sanitizer_filter
  case $tool in
    # LeavesEarlierErrorsAlone makes a cudaMalloc fail on purpose, which memcheck counts as an
    # error (it reports failing CUDA API calls).
    memcheck) options+=(--leak-check full) filter+="-*LeavesEarlierErrorsAlone*" ;;
    racecheck) options+=(--racecheck-report hazard) ;;
  esac
  echo "===== compute-sanitizer ${options[*]} mrope_kernel_test --gtest_filter=$filter" \
    >>"$out/sanitizers.log"
  MROPE_REQUIRE_GPU=1 timeout "$step_timeout" "$sanitizer" "${options[@]}" "$test_bin" \
    --gtest_filter="$filter" >"$state/$tool.log" 2>&1
  rc=$?
  clip "$state/$tool.log" >>"$out/sanitizers.log"
  summary=$(grep -o '\(ERROR\|RACECHECK\) SUMMARY: .*' "$state/$tool.log" | tail -n 1)
  ran=$(sed -n 's/^\[==========\] \([0-9]*\) tests\{0,1\} from .* ran\..*/\1/p' "$state/$tool.log")
  if [ "$rc" -eq 0 ] && [ "${ran:-0}" -eq 0 ]; then
    rc=1  # a filter that matches nothing checks nothing
  fi
  step_done "$tool" "$rc" "${summary:-no summary line}; ${ran:-no} tests ran"
done

python3 "$bundle/report.py" "$bundle" "$state" "$out"
rc=$?
cat "$out/report.md"
echo "run.sh: report in $out/report.md"
exit $rc
