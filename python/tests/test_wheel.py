"""The wheel installs with pip into a fresh venv offline, and mrope then imports and computes
outside the repository with the system python3 and numpy (the venv sees Debian's
python3-numpy through --system-site-packages). With the C library, mrope.cuda works where the
extension does not load (as on another CPython)."""
import os
import shutil
import subprocess
import sys
import zipfile

import golden
import mrope

WHEEL_SCRIPT = os.path.join(os.path.dirname(mrope.__file__), os.pardir, "wheel.py")
EXTENSION = mrope._mrope.__file__
# The C ABI's host-harness build stands in for libmrope_c.so (same ABI; kernels on the CPU).
C_LIBRARY = os.path.join(os.environ["MROPE_REPO_DIR"], "capi", "libmrope_c_host.so")

CHECK = """
import mrope, numpy as np
import mrope.integrations.transformers  # subpackages are packed too
positions, deltas = mrope.Model.from_config("qwen2_vl").get_rope_index(np.array([[11, 12, 13]]))
assert "site-packages" in mrope.__file__, mrope.__file__
print(positions[0].tolist(), deltas.tolist())
"""


# The subprocesses must not see the package under test through PYTHONPATH.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def run(*command, cwd):
    result = subprocess.run(command, cwd=cwd, env=ENV, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


# The extension made unloadable, as on a CPython it was not built for: mrope.cuda loads the
# wheel's libmrope_c.so and rotates numpy arrays (host kernels) for a preset name.
CUDA_CHECK = """
import sys
sys.modules["mrope._mrope"] = None
import numpy as np, mrope, mrope.cuda, mrope._capi
assert mrope._capi.library()._name.endswith("site-packages/mrope/libmrope_c.so")
q, k = np.ones((3, 2, 128), np.float32), np.ones((3, 1, 128), np.float32)
mrope.cuda.apply_mrope_(q, k, np.arange(3), "qwen2_vl", error_flag=np.zeros(1, np.int32))
print(round(float(q[2, 0, 0]), 4))
"""

PLUGINS_CHECK = """
from importlib.metadata import entry_points
import mrope.integrations.sglang, mrope.integrations.vllm
for group in ("sglang.srt.plugins", "vllm.general_plugins"):
    print(*[e.value for e in entry_points(group=group) if e.name == "mrope"])
"""


def test_wheel_installs_offline_in_a_fresh_venv(tmp_path):
    wheel = run(sys.executable, WHEEL_SCRIPT, "--extension", EXTENSION, "--c-library",
                C_LIBRARY, "--version", "0+test", "--out", str(tmp_path / "dist"),
                cwd=tmp_path).strip()
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--system-site-packages", str(venv), cwd=tmp_path)
    python = str(venv / "bin" / "python3")
    run(python, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", "-q", wheel,
        cwd=tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert run(python, "-c", CHECK, cwd=elsewhere).strip() == "[[0, 1, 2]] [[0]]"
    # position 2, pair 0: 1 * cos(2) - 1 * sin(2)
    assert run(python, "-c", CUDA_CHECK, cwd=elsewhere).strip() == "-1.3254"
    # The runtimes' loaders find the plugins, and the plugin modules are in the wheel.
    assert run(python, "-c", PLUGINS_CHECK, cwd=elsewhere).split() == [
        "mrope.integrations.sglang:register", "mrope.integrations.vllm:register"]


# A wheel without --cuda (a CPU wheel) from a package with a subpackage and an entry point:
# both reach the installed wheel, and mrope.cuda.available() says it is a CPU wheel.
PLUGIN_CHECK = """
from importlib import metadata
import mrope.cuda, mrope.plugins.example
(entry,) = metadata.entry_points(group="mrope.test_plugins")
assert entry.load() is mrope.plugins.example.register, entry
ok, message = mrope.cuda.available()
print(ok, message)
"""


def test_wheel_carries_subpackages_and_entry_points_and_names_a_cpu_wheel(tmp_path,
                                                                         monkeypatch):
    wheel = golden.load_script("mrope_wheel_script", WHEEL_SCRIPT)
    package = tmp_path / "src" / "mrope"
    shutil.copytree(wheel.PACKAGE_DIR, package)
    (package / "plugins").mkdir()
    (package / "plugins" / "__init__.py").write_text("")
    (package / "plugins" / "example.py").write_text("def register():\n    pass\n")
    monkeypatch.setattr(wheel, "PACKAGE_DIR", str(package))
    monkeypatch.setattr(wheel, "ENTRY_POINTS",
                        {"mrope.test_plugins": ["example = mrope.plugins.example:register"]})
    path = wheel.build(EXTENSION, "0+test", str(tmp_path / "dist"))
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--system-site-packages", str(venv), cwd=tmp_path)
    python = str(venv / "bin" / "python3")
    run(python, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", "-q", path,
        cwd=tmp_path)
    out = run(python, "-c", PLUGIN_CHECK, cwd=tmp_path).strip()
    assert out.startswith("False a CPU wheel of mrope (built without nvcc)"), out


def test_wheel_of_another_cpython_is_named_and_tagged_for_it(tmp_path):
    # tools/build_wheel.sh --python 3.9: the extension built against bullseye's CPython 3.9
    # headers, packed by this machine's python3 with that CPython's version and EXT_SUFFIX.
    out = run(sys.executable, WHEEL_SCRIPT, "--extension", EXTENSION, "--version", "0+test",
              "--python", "3.9", "--ext-suffix", ".cpython-39-x86_64-linux-gnu.so",
              "--platform", "manylinux_2_28_x86_64", "--out", str(tmp_path), cwd=tmp_path)
    path = out.strip()
    assert os.path.basename(path) == "mrope-0+test-cp39-cp39-manylinux_2_28_x86_64.whl", path
    with zipfile.ZipFile(path) as wheel:
        names = wheel.namelist()
        metadata = wheel.read("mrope-0+test.dist-info/METADATA").decode().splitlines()
        tags = wheel.read("mrope-0+test.dist-info/WHEEL").decode().splitlines()
    assert "mrope/_mrope.cpython-39-x86_64-linux-gnu.so" in names, names
    assert not [n for n in names if n.startswith("mrope/_mrope.cpython-311")], names
    assert "Requires-Python: ==3.9.*" in metadata, metadata
    assert "Tag: cp39-cp39-manylinux_2_28_x86_64" in tags, tags
