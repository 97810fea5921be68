"""Checks of the shipped wheel (tools/test_wheel.sh builds it and runs this file with the test
environment's pytest; not a test_*.py file, so //python:pytest does not collect it):

- it is a manylinux_2_28 wheel, and auditwheel agrees;
- its libraries export only mrope_* (MROPE_C_1) and PyInit_*, need only glibc and libgcc_s (no
  Abseil, protobuf or libstdc++), and every symbol they take from them is versioned, at glibc
  2.28 or older (the extension's Python C API aside);
- installed into a fresh venv that sees nothing of the system's site-packages (numpy and pytest
  from the package index), the Python tests pass against it (their cases are counted on their
  own, from the JUnit file $MROPE_WHEEL_PYTEST_XML);
- it imports beside torch, the protobuf wheel and onnxruntime (each with a protobuf runtime of
  its own) in both orders, and computes positions, cos/sin and the host-harness kernel there;
- the C library's CMake package of the same build (//capi:install_tree) needs no Abseil or
  protobuf either, and examples/cmake builds and runs against it.

Environment: MROPE_WHEEL (the .whl), MROPE_C_HOST_LIBRARY (the static build of
//capi:libmrope_c_host.so), MROPE_C_INSTALL_TAR (the static build of //capi:install_tree;
unset without nvcc), MROPE_PYENV (the test environment), MROPE_WHEEL_PYTEST_XML, and
MROPE_WHEEL_PYTHON=X.Y for a wheel of another CPython (tools/test_wheel.sh --python X.Y): its
venv is made inside a Debian chroot of that CPython (tools/python_chroot.sh; bullseye's glibc
2.31 for 3.9), numpy and pytest from its wheelhouse (the newest for X.Y: the test
environment's pins are CPython 3.11's), and the imports beside torch are left out (the test
environment's torch is CPython 3.11's).
"""
import os
import re
import subprocess
import sys
import tarfile
import zipfile

import pytest

REPO_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
WHEEL = os.environ["MROPE_WHEEL"]
PYENV = os.environ["MROPE_PYENV"]
# The README's promise: the wheel installs and runs on glibc >= 2.28.
MANYLINUX = "manylinux_2_28_x86_64"
# What a library of the wheel may need: glibc and libgcc_s (of manylinux's list; libstdc++ is
# linked in: gcc 12's needs GLIBCXX_3.4.30, which glibc 2.28's systems do not have).
ALLOWED = {"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2", "libdl.so.2", "libpthread.so.0",
           "librt.so.1", "libgcc_s.so.1"}
# Exports: the C ABI's functions under MROPE_C_1, the module's init under MROPE_PY_1, and the
# version nodes themselves.
EXPORT = re.compile(r"(mrope_\w+@@MROPE_C_1|PyInit_\w+@@MROPE_PY_1|MROPE_(C|PY)_1)")
# The requirement lines of the test environment's pins (numpy, pytest) for the fresh venv.
PINS = {line.split("==")[0]: line.split()[0]
        for line in open(os.path.join(REPO_DIR, "python", "requirements-test.txt"))
        if "==" in line and "#" not in line}
WHEELHOUSE = os.path.join(os.path.dirname(PYENV), "wheels")
WHEEL_PYTHON = os.environ.get("MROPE_WHEEL_PYTHON")
# The prefix that runs a command where the wheel's CPython is: here, or in its chroot.
WHERE_PYTHON = ([os.path.join(REPO_DIR, "tools", "python_chroot.sh"), WHEEL_PYTHON, "--run"]
                if WHEEL_PYTHON else [])
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def run(*command, cwd=None, env=None):
    result = subprocess.run(command, cwd=cwd, env=env or ENV, capture_output=True, text=True)
    assert result.returncode == 0, " ".join(command) + "\n" + result.stdout + result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    """The wheel's shared libraries, unpacked."""
    out = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(WHEEL) as wheel:
        names = [n for n in wheel.namelist() if n.endswith(".so")]
        wheel.extractall(out, names)
    return [str(out / n) for n in names]


def manylinux_glibc(tag):
    """(2, 28) of manylinux_2_28_x86_64."""
    return tuple(int(n) for n in re.fullmatch(r"manylinux_(\d+)_(\d+)_x86_64", tag).groups())


def test_auditwheel_finds_the_wheel_manylinux_2_28():
    assert WHEEL.endswith(f"-{MANYLINUX}.whl"), WHEEL
    tools = os.path.join(PYENV, "targets", "wheeltools")
    out = run(os.path.join(PYENV, "bin", "python"), "-m", "auditwheel", "show", WHEEL,
              env=dict(ENV, PYTHONPATH=tools))
    # auditwheel names the oldest manylinux whose symbol versions the libraries keep to (older
    # than 2.28 where they happen to need less; each manylinux allows what the older ones do).
    found = re.search(r'consistent\s+with\s+the\s+following\s+platform\s+tag:\s+'
                      r'"(manylinux_\d+_\d+_x86_64)"', out)
    assert found and manylinux_glibc(found.group(1)) <= manylinux_glibc(MANYLINUX), out


def test_exports_only_mropes_symbols(libraries):
    assert libraries
    for library in libraries:
        # Lower-case types are local (pybind11's TLS counter sits in .dynsym as a local).
        exported = [line.split()[-1] for line in run("nm", "-D", "--defined-only",
                                                     library).splitlines()
                    if line.split()[-2] not in "bdrt"]
        assert exported and all(EXPORT.fullmatch(s) for s in exported), (library, [
            s for s in exported if not EXPORT.fullmatch(s)])


def needed(library):
    return set(re.findall(r"\(NEEDED\).*\[(.*)\]", run("readelf", "-d", library)))


def test_needs_only_glibc_and_libgcc_s(libraries):
    for library in libraries:
        assert needed(library) <= ALLOWED, (library, needed(library))


def assert_takes_only_versioned_symbols_of_glibc_2_28(library):
    # Linked against glibc 2.28's stubs (tools/glibc_stubs.sh), a symbol that 2.28 lacks would
    # stay undefined without a version in the extension (its Python C API is undefined too, so
    # it links without --no-undefined) and fail where it loads. Weak ones may stay unresolved.
    python_api = os.path.basename(library).startswith("_mrope.")  # the extension
    for line in run("objdump", "-T", library).splitlines():
        fields = line.split()
        if "*UND*" not in fields or fields[1] == "w":
            continue
        symbol, version = fields[-1], fields[-2]
        if python_api and re.match(r"_?Py", symbol):
            continue
        assert re.fullmatch(r"\((GLIBC_[\d.]+|GCC_[\d.]+)\)", version), (library, line)
        if version.startswith("(GLIBC_"):
            glibc = tuple(int(n) for n in version[len("(GLIBC_"):-1].split("."))
            assert glibc[:2] <= manylinux_glibc(MANYLINUX), (library, line)


def test_takes_only_versioned_symbols_of_glibc_2_28(libraries):
    for library in libraries:
        assert_takes_only_versioned_symbols_of_glibc_2_28(library)


def test_cmake_package_links_without_abseil_or_protobuf(tmp_path):
    tar = os.environ.get("MROPE_C_INSTALL_TAR")
    if not tar:
        pytest.skip("no nvcc: the C library needs the CUDA kernels")
    with tarfile.open(tar) as tree:
        tree.extract("lib/libmrope_c.so", tmp_path)
    assert needed(str(tmp_path / "lib" / "libmrope_c.so")) <= ALLOWED
    assert_takes_only_versioned_symbols_of_glibc_2_28(str(tmp_path / "lib" / "libmrope_c.so"))
    out = run(os.path.join(REPO_DIR, "examples", "cmake", "run_cmake_example_test.sh"), tar,
              os.path.join(REPO_DIR, "examples", "cmake"), env=dict(ENV, TEST_TMPDIR=str(tmp_path)))
    assert "delta: -2" in out.splitlines(), out


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """The command of a fresh venv's python (no system site-packages) with numpy, pytest and
    the wheel."""
    path = tmp_path_factory.mktemp("venv") / "venv"
    python = [*WHERE_PYTHON, str(path / "bin" / "python")]
    pip = [*python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    if WHEEL_PYTHON:
        run(*WHERE_PYTHON, "python" + WHEEL_PYTHON, "-m", "venv", str(path))
        run(*pip, "numpy", "pytest")
    else:
        run(sys.executable, "-m", "venv", str(path))  # the test env's base: Debian's python3
        pip += ["--no-index", "--find-links", WHEELHOUSE]
        run(*pip, PINS["numpy"], PINS["pytest"])
    run(*pip, WHEEL)
    return python


def test_python_tests_pass_against_the_installed_wheel(venv, tmp_path):
    tests = os.path.join(REPO_DIR, "python", "tests")
    env = dict(ENV, MROPE_REPO_DIR=REPO_DIR, MROPE_PYENV=PYENV)
    result = subprocess.run(
        [*venv, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--without-references",
         "--junitxml=" + os.environ["MROPE_WHEEL_PYTEST_XML"],
         "--ignore=" + os.path.join(tests, "test_wheel.py"),  # the Bazel build's own wheel test
         # Ray's and vLLM's tests need the reference environment (//python:pytest_ray,
         # :pytest_vllm_fused_host), which the bare venv is not.
         "--without=test_ray.py", "--without=test_vllm_fused_host.py",
         tests], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    assert "site-packages/mrope/" in run(*venv, "-c", "import mrope; print(mrope.__file__)",
                                         cwd=tmp_path)


# Imports the others (in the given order, before or after mrope), exercises each, then mrope:
# positions, cos/sin, and the host-harness C library's kernel through mrope.cuda, loaded beside
# the extension (two copies of mrope's C++ code, each with its own protobuf, in one process).
COEXIST = r"""
import ctypes, os, sys
order = sys.argv[1]
def others():
    import torch
    from google.protobuf import descriptor_pb2, descriptor_pool
    import onnxruntime
    assert torch.__version__.startswith("2.15"), torch.__version__
    # A file like mrope's in the protobuf wheel's default pool: mrope registers nothing there.
    descriptor_pool.Default().Add(descriptor_pb2.FileDescriptorProto(
        name="proto/mrope.proto", package="mrope"))
    assert "CPUExecutionProvider" in onnxruntime.get_available_providers()
    return float(torch.ones(3).sum())
if order == "others_first":
    assert others() == 3.0
import numpy as np, mrope, mrope.cuda, mrope._capi as capi
if order == "mrope_first":
    assert others() == 3.0
model = mrope.Model.from_config("qwen2_vl")
positions, deltas = model.get_rope_index(np.array([[11, 12, 13]]))
assert positions[:, 0].tolist() == [[0, 1, 2]] * 3, positions
cos, sin = model.plan([[11, 12, 13]]).cos_sin()
assert abs(float(cos[0, 2, 0]) - float(np.cos(np.float32(2)))) < 1e-6
lib = ctypes.CDLL(os.environ["MROPE_C_HOST_LIBRARY"])
for name, (restype, argtypes) in capi._SIGNATURES.items():
    getattr(lib, name).restype, getattr(lib, name).argtypes = restype, argtypes
capi._library = lib  # mrope.cuda on the host-harness build, beside the extension
assert capi.kernels_on_host()
q, k = np.ones((3, 2, 128), np.float32), np.ones((3, 1, 128), np.float32)
mrope.cuda.apply_mrope_(q, k, np.arange(3), "qwen2_vl", error_flag=np.zeros(1, np.int32))
# position 2, pair 0: 1 * cos(2) - 1 * sin(2), by the kernel and by the extension's cos/sin
print(round(float(q[2, 0, 0]), 4), round(float(cos[0, 2, 0] - sin[0, 2, 0]), 4))
"""


@pytest.mark.skipif(WHEEL_PYTHON is not None, reason="the test environment is CPython 3.11's")
@pytest.mark.parametrize("order", ["others_first", "mrope_first"])
def test_coexists_with_torch_protobuf_and_onnxruntime(venv, tmp_path, order):
    # After the venv's own site-packages (its mrope and numpy come first): the protobuf and
    # onnxruntime wheels, then the test environment's torch.
    site = run(*venv, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip()
    env_site = run(os.path.join(PYENV, "bin", "python"), "-c",
                   "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip()
    with open(os.path.join(site, "zz_coexist.pth"), "w") as pth:
        pth.write(os.path.join(PYENV, "targets", "coexist") + "\n" + env_site + "\n")
    try:
        out = run(*venv, "-c", COEXIST, order, cwd=tmp_path,
                  env=dict(ENV, MROPE_C_HOST_LIBRARY=os.environ["MROPE_C_HOST_LIBRARY"]))
    finally:
        os.remove(os.path.join(site, "zz_coexist.pth"))
    assert out.split() == ["-1.3254", "-1.3254"]
