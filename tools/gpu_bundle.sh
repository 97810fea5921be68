#!/bin/bash
# Builds gpu_bundle/ (git-ignored): the kernel tests and benchmark (-c opt; SASS for sm_80 and
# sm_90 + compute_90 PTX, third_party/cuda/defs.bzl), the access model's predictions
# (predictions.tsv, from kernels/host_harness:resource_usage_test), the C ABI's test with
# libmrope_c.so, mrope.cuda's Python files and device tests, every shared library they need
# except glibc's, and run.sh, which runs the GPU check (kernels/BENCHMARKS.md, "The GPU check in
# one command"). The GPU machine has no Bazel and another Linux, so the binaries find their
# libraries in the bundle only (RUNPATH $ORIGIN/../lib), which this script checks with
# `env -i ldd` before it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
if ! command -v patchelf >/dev/null; then  # sets the RUNPATHs (Debian package patchelf)
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends patchelf >/dev/null
fi

binaries=(tests/kernels/mrope_kernel_test kernels/mrope_kernel_benchmark
          kernels/fused_kernel_benchmark capi/mrope_c_device_test)
bazel build -c opt //tests/kernels:mrope_kernel_test //kernels:mrope_kernel_benchmark \
  //kernels:fused_kernel_benchmark //capi:mrope_c_device_test
bazel_bin=$(bazel info -c opt bazel-bin)
# The access model's predicted fraction of copy per kernel, shape and GPU (from nvcc's resource
# usage; kernels/BENCHMARKS.md, "Calibration"): report.py shows it next to the measured one.
bazel test -c opt //kernels/host_harness:resource_usage_test
outputs=$(bazel info -c opt bazel-testlogs)/kernels/host_harness/resource_usage_test/test.outputs
predictions=$(mktemp)
python3 - "$outputs" "$predictions" <<'PY'
import os, sys, zipfile
outputs, dest = sys.argv[1:]
if os.path.exists(os.path.join(outputs, "outputs.zip")):
    data = zipfile.ZipFile(os.path.join(outputs, "outputs.zip")).read("predictions.tsv")
else:
    data = open(os.path.join(outputs, "predictions.tsv"), "rb").read()
open(dest, "wb").write(data)
PY
bazel shutdown  # the server would otherwise idle for hours

bundle=gpu_bundle
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
for b in "${binaries[@]}"; do
  cp -L "$bazel_bin/$b" "$bundle/bin/"
done
cp tools/gpu_bundle/run.sh tools/gpu_bundle/report.py tools/gpu_bundle/fused_report.py "$bundle/"
mv "$predictions" "$bundle/predictions.tsv"
# mrope.cuda's pure-Python files and its device tests; its library is lib/libmrope_c.so (the C
# test's, copied below), so any python3 there runs them (the compiled extension is not needed).
mkdir -p "$bundle/python/mrope" "$bundle/python/tests"
cp python/mrope/*.py "$bundle/python/mrope/"
cp python/tests/test_cuda_device.py "$bundle/python/tests/"
chmod -R u+w "$bundle"

# glibc's libraries must be the GPU machine's own (they go with its ld.so); libcuda comes with
# its driver (cudart, linked statically, dlopens it).
deps() {  # "name path" of each library BINARY loads in a clean environment ("(not found)")
  env -i ldd "$1" | awk '$2 == "=>" { print $1, ($3 == "not" ? "(not found)" : $3) }'
}
system_lib='^(linux-vdso|ld-linux-x86-64|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|libBrokenLocale|libthread_db|libnss_[a-z]+|libcuda)\.so'
for b in "${binaries[@]}"; do  # ldd on Bazel's copy: its RUNPATH finds Bazel's own .so's
  while read -r name path; do
    [[ $name =~ $system_lib ]] && continue
    if [ ! -f "$path" ]; then
      echo "gpu_bundle.sh: $b needs $name: not found" >&2
      exit 1
    fi
    cp -L "$path" "$bundle/lib/$name"
  done < <(deps "$bazel_bin/$b")
done
chmod u+w "$bundle"/lib/*
patchelf --set-rpath '$ORIGIN/../lib' "$bundle"/bin/*
patchelf --set-rpath '$ORIGIN' "$bundle"/lib/*  # their own dependencies, e.g. absl on absl

cat >"$bundle/VERSION" <<EOF
commit=$(git rev-parse HEAD)
tree=$([ -z "$(git status --porcelain --untracked-files=no)" ] && echo clean || echo "with uncommitted changes")
built=$(date -u +%Y-%m-%dT%H:%M:%SZ)
nvcc=$(/usr/local/cuda/bin/nvcc --version | sed -n 's/.*release \([0-9.]*\), V\([0-9.]*\).*/\2/p')
EOF

# Every library but glibc's must come from the bundle (as on the GPU machine, which has none).
bad=()
for b in "$bundle"/bin/*; do
  while read -r name path; do
    [[ $name =~ $system_lib ]] && continue
    [ "$(realpath -m "$path")" = "$(realpath "$bundle/lib")/$name" ] || bad+=("$b: $name => $path")
  done < <(deps "$b")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "gpu_bundle.sh: libraries not resolved from $bundle/lib:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi

size_kib=$(du -sk "$bundle" | cut -f1)
max_kib=$((48 * 1024))  # what the device tool carries is at most 64 MiB in all
if [ "$size_kib" -gt "$max_kib" ]; then
  echo "gpu_bundle.sh: $bundle is $((size_kib / 1024)) MiB, more than $((max_kib / 1024)) MiB" >&2
  exit 1
fi
echo "gpu_bundle.sh: $bundle/ ready, $((size_kib / 1024)) MiB, $(ls "$bundle/lib" | wc -l) libraries."
echo "On a GPU machine: $bundle/run.sh REPORT_DIR   (kernels/BENCHMARKS.md)"
