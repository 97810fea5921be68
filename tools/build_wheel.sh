#!/bin/bash
# Builds the Python package's wheel into dist/ and prints its path:
#   dist/mrope-<version>+cu130-cp311-cp311-manylinux_2_28_x86_64.whl   (with nvcc)
#   dist/mrope-<version>-cp311-cp311-manylinux_2_28_x86_64.whl         (a CPU wheel)
# for Debian's python3 (the interpreter the extension is built against; $MROPE_PYTHON names
# another), or with `build_wheel.sh --python X.Y` (-cpXY-cpXY-) for the CPython X.Y of another
# Debian release (3.9, 3.13): its headers and pybind11 come from a chroot of that release
# (tools/python_chroot.sh). Abseil, protobuf and libstdc++ are linked in, against glibc 2.28's
# ABI (tools/static_bazel.sh), so the wheel needs only glibc >= 2.28, libgcc_s and numpy.
# With a CUDA toolkit it carries the kernels for the GPUs of CUDA_ARCHS plus PTX (the CUDA
# runtime linked statically), in the extension and in mrope/libmrope_c.so (the C ABI, for
# mrope.cuda where the extension does not load, and for C programs); without one it is a CPU
# wheel (mrope.cuda.available() says so). tools/test_wheel.sh checks and installs it.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
# The CPython the extension is for, and its sysconfig's answers (read there: a chroot's
# interpreter may not run here) for Bazel (@pybind11's headers) and python/wheel.py.
python=("${MROPE_PYTHON:-/usr/bin/python3}")
sysroot=""
pybind11=/usr/include
if [ "${1:-}" = --python ]; then
  sysroot=$(tools/python_chroot.sh "$2")
  python=(tools/python_chroot.sh "$2" --run "python$2")
  # The suite's pybind11 where it is newer than bookworm's 2.10 (3.13 needs >= 2.12).
  pybind11_version() {
    sed -n 's/^#define PYBIND11_VERSION_\(MAJOR\|MINOR\) \([0-9]*\)$/\2/p' \
      "$1/pybind11/detail/common.h" | paste -sd.
  }
  newer=$(printf '%s\n' "$(pybind11_version "$pybind11")" \
    "$(pybind11_version "$sysroot/usr/include")" | sort -V | tail -1)
  [ "$newer" = "$(pybind11_version "$pybind11")" ] || pybind11="$sysroot/usr/include"
fi
read -r python_version include ext_suffix < <("${python[@]}" -c 'import sys, sysconfig
print("%d.%d" % sys.version_info[:2], sysconfig.get_paths()["include"],
      sysconfig.get_config_var("EXT_SUFFIX"))')
[ -n "$ext_suffix" ] || { echo "build_wheel.sh: ${python[*]} did not answer" >&2; exit 1; }
export MROPE_PYTHON_INCLUDE="$sysroot$include" MROPE_PYBIND11_INCLUDE="$pybind11"
version=$(sed -n 's/^ *version = "\(.*\)",$/\1/p' MODULE.bazel | head -1)
CUDA_ARCHS=80,89,90,100,120  # A100, L4/L40/RTX 40xx, H100/H200, B200/GB200, RTX 50xx/RTX PRO
PTX_ARCH=120
nvcc="${CUDA_PATH:-/usr/local/cuda}/bin/nvcc"
targets=(//python:mrope/_mrope.so)
flags=(-c opt --config=quiet)
cuda=()
if [ -x "$nvcc" ]; then  # the C ABI needs the CUDA kernels
  cuda_version=$("$nvcc" --version | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1.\2/p')
  version+="+cu${cuda_version/./}"
  targets+=(//capi:libmrope_c.so)
  flags+=("--define=mrope_cuda_archs=$CUDA_ARCHS" "--define=mrope_ptx_arch=$PTX_ARCH")
  cuda=(--c-library "" --cuda "$cuda_version" --cuda-archs "$CUDA_ARCHS" --ptx-arch "$PTX_ARCH")
fi
tools/static_bazel.sh build "${flags[@]}" "${targets[@]}" >&2
bin=$(tools/static_bazel.sh info -c opt bazel-bin 2>/dev/null)  # not --config=quiet: it hides stdout
binaries=("$bin/python/mrope/_mrope.so")
if [ ${#cuda[@]} -gt 0 ]; then
  cuda[1]="$bin/capi/libmrope_c.so"
  binaries+=("${cuda[1]}")
fi
# The platform tag: manylinux_2_28, the glibc the binaries were linked against; none of their
# symbol versions may be newer (auditwheel show may find an older tag enough: they need less).
floor=$(tools/glibc_stubs.sh --version)
newest=$(objdump -T "${binaries[@]}" | grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n -u | tail -1)
if [ "${newest#GLIBC_2.}" -gt "${floor#2.}" ]; then
  echo "build_wheel.sh: the binaries need $newest, newer than glibc $floor" >&2
  exit 1
fi
python3 python/wheel.py --extension "${binaries[0]}" "${cuda[@]}" --version "$version" \
  --python "$python_version" --ext-suffix "$ext_suffix" \
  --platform "manylinux_${floor/./_}_x86_64" --out dist
