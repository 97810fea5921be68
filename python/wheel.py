#!/usr/bin/env python3
"""Packs the built extension and the pure-Python package into a wheel (stdlib only).

Usage: wheel.py --extension PATH/_mrope.so [--c-library PATH/libmrope_c.so] --version VERSION
                --out DIR

Writes DIR/mrope-VERSION-cpXY-cpXY-PLATFORM.whl for the running interpreter (run it with the
python3 the extension was built against) and prints its path. The extension links Debian's
shared Abseil and protobuf libraries, so the wheel is tagged for this platform only
(linux_x86_64, not manylinux) and needs those libraries installed where it runs.

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

# The runtimes' plugin loaders find mrope's plugins (mrope/integrations) through these.
ENTRY_POINTS = """\
[sglang.srt.plugins]
mrope = mrope.integrations.sglang:register

[vllm.general_plugins]
mrope = mrope.integrations.vllm:register
"""


def wheel_tag():
    """The cpXY-cpXY-platform tag of the running interpreter."""
    abi = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{abi}-{abi}-{platform}"


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build(extension, version, out_dir, c_library=None):
    """Writes the wheel and returns its path."""
    tag = wheel_tag()
    dist_info = f"mrope-{version}.dist-info"
    files = {}
    for name in sorted(os.listdir(PACKAGE_DIR)):
        if name.endswith(".py"):
            with open(os.path.join(PACKAGE_DIR, name), "rb") as f:
                files[f"mrope/{name}"] = f.read()
    integrations = os.path.join(PACKAGE_DIR, "integrations")
    for name in sorted(os.listdir(integrations)):
        if name.endswith(".py"):
            with open(os.path.join(integrations, name), "rb") as f:
                files[f"mrope/integrations/{name}"] = f.read()
    with open(extension, "rb") as f:
        files["mrope/_mrope" + sysconfig.get_config_var("EXT_SUFFIX")] = f.read()
    if c_library is not None:
        with open(c_library, "rb") as f:
            files["mrope/libmrope_c.so"] = f.read()
    files[f"{dist_info}/METADATA"] = METADATA.format(
        version=version, major=sys.version_info.major, minor=sys.version_info.minor).encode()
    files[f"{dist_info}/WHEEL"] = WHEEL.format(tag=tag).encode()
    files[f"{dist_info}/top_level.txt"] = b"mrope\n"
    files[f"{dist_info}/entry_points.txt"] = ENTRY_POINTS.encode()
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
    parser.add_argument("--version", required=True)
    parser.add_argument("--out", required=True, help="output directory")
    args = parser.parse_args()
    print(build(args.extension, args.version, args.out, args.c_library))


if __name__ == "__main__":
    main()
