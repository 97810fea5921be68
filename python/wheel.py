#!/usr/bin/env python3
"""Packs the built extension and the pure-Python package into a wheel (stdlib only).

Usage: wheel.py --extension PATH/_mrope.so [--c-library PATH/libmrope_c.so] --version VERSION
                [--platform TAG] [--cuda VERSION --cuda-archs 80,90,... --ptx-arch N]
                [--python X.Y --ext-suffix .cpython-XY-x86_64-linux-gnu.so] --out DIR

Writes DIR/mrope-VERSION-cpXY-cpXY-PLATFORM.whl and prints its path. The extension was built
against the headers of CPython X.Y (--python and its EXT_SUFFIX, --ext-suffix: another
CPython's, e.g. of a Debian chroot, tools/build_wheel.sh --python X.Y; by default the running
interpreter's). PLATFORM is --platform (e.g.
manylinux_2_28_x86_64 from tools/build_wheel.sh: the glibc its binaries are linked against,
Abseil, protobuf and libstdc++ linked in) or this machine's (linux_x86_64: the Bazel build of
the tests, which links Debian's shared libraries).

Every .py file under python/mrope/ goes in, subpackages included. ENTRY_POINTS below become
the dist-info's entry_points.txt. mrope/_build.py records the CUDA build (--cuda, the archs)
for mrope.cuda.available(); without --cuda the wheel is a CPU wheel.

With --c-library the wheel also carries mrope/libmrope_c.so, the C ABI (capi/), which
mrope.cuda loads through ctypes where the extension does not load (another CPython); C
programs can link it too (mrope.cuda's docs; capi/README.md).
"""
import argparse
import base64
import hashlib
import os
import sys
import sysconfig
import zipfile

PACKAGE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mrope")

# Entry points by group: {"group": ["name = module:attribute", ...]}. The runtimes' plugin
# loaders find mrope's plugins (mrope/integrations) through these.
ENTRY_POINTS = {
    "sglang.srt.plugins": ["mrope = mrope.integrations.sglang:register"],
    "vllm.general_plugins": ["mrope = mrope.integrations.vllm:register"],
}

METADATA = """\
Metadata-Version: 2.1
Name: mrope
Version: {version}
Summary: M-RoPE position ids for vision-language models, bit-exact with HF transformers
Requires-Python: =={major}.{minor}.*
Requires-Dist: numpy
"""

WHEEL = """\
Wheel-Version: 1.0
Generator: mrope python/wheel.py
Root-Is-Purelib: false
Tag: {tag}
"""

BUILD_INFO = '''\
"""How this package was built (written by python/wheel.py; read by mrope.cuda.available())."""
CUDA_VERSION = {cuda!r}  # None: a CPU wheel, built without nvcc
CUDA_ARCHS = {archs!r}  # SASS for these sm_XX
PTX_ARCH = {ptx!r}  # and PTX for compute_XX, JIT-compiled by the driver on newer GPUs
'''



def python_version(version=None):
    """(major, minor) of "X.Y", or of the running interpreter."""
    return tuple(int(n) for n in version.split(".")) if version else sys.version_info[:2]


def wheel_tag(platform=None, python=None):
    """The cpXY-cpXY-platform tag of CPython `python` ("X.Y"; the running interpreter's)."""
    abi = "cp%d%d" % python_version(python)
    platform = platform or sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{abi}-{abi}-{platform}"


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def python_files():
    """{wheel path: contents} of every .py file of the package, subpackages included."""
    files = {}
    for directory, subdirs, names in os.walk(PACKAGE_DIR):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py") and name != "_build.py":
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, os.path.dirname(PACKAGE_DIR))
                with open(path, "rb") as f:
                    files[relative.replace(os.sep, "/")] = f.read()
    return files


def entry_points_txt(entry_points):
    return "".join(f"[{group}]\n" + "".join(f"{line}\n" for line in lines) + "\n"
                   for group, lines in sorted(entry_points.items()))


def build(extension, version, out_dir, c_library=None, platform=None, cuda=None,
          cuda_archs=(), ptx_arch=None, python=None, ext_suffix=None):
    """Writes the wheel and returns its path."""
    tag = wheel_tag(platform, python)
    major, minor = python_version(python)
    dist_info = f"mrope-{version}.dist-info"
    files = python_files()
    files["mrope/_build.py"] = BUILD_INFO.format(
        cuda=cuda, archs=tuple(cuda_archs) if cuda else (),
        ptx=ptx_arch if cuda else None).encode()
    with open(extension, "rb") as f:
        files["mrope/_mrope" + (ext_suffix or sysconfig.get_config_var("EXT_SUFFIX"))] = f.read()
    if c_library is not None:
        with open(c_library, "rb") as f:
            files["mrope/libmrope_c.so"] = f.read()
    files[f"{dist_info}/METADATA"] = METADATA.format(
        version=version, major=major, minor=minor).encode()
    files[f"{dist_info}/WHEEL"] = WHEEL.format(tag=tag).encode()
    files[f"{dist_info}/top_level.txt"] = b"mrope\n"
    if ENTRY_POINTS:
        files[f"{dist_info}/entry_points.txt"] = entry_points_txt(ENTRY_POINTS).encode()
    record = [record_line(name, data) for name, data in files.items()]
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()

    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"mrope-{version}-{tag}.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extension", required=True, help="the built _mrope.so")
    parser.add_argument("--c-library", help="libmrope_c.so to ship beside the extension")
    parser.add_argument("--version", required=True, help="e.g. 0.1.0+cu130")
    parser.add_argument("--platform", help="platform tag, e.g. manylinux_2_28_x86_64")
    parser.add_argument("--cuda", help="the CUDA version the kernels were built with")
    parser.add_argument("--cuda-archs", default="", help="comma-separated sm_XX numbers")
    parser.add_argument("--ptx-arch", help="the compute_XX of the PTX")
    parser.add_argument("--python", help="the extension's CPython X.Y (default: this one)")
    parser.add_argument("--ext-suffix", help="that CPython's EXT_SUFFIX (with --python)")
    parser.add_argument("--out", required=True, help="output directory")
    args = parser.parse_args()
    if bool(args.python) != bool(args.ext_suffix):
        parser.error("--python and --ext-suffix go together")
    archs = tuple(a for a in args.cuda_archs.split(",") if a)
    print(build(args.extension, args.version, args.out, args.c_library, args.platform, args.cuda,
                archs, args.ptx_arch, args.python, args.ext_suffix))


if __name__ == "__main__":
    main()
