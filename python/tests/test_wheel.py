"""The wheel installs with pip into a fresh venv offline, and mrope then imports and computes
outside the repository with the system python3 and numpy (the venv sees Debian's
python3-numpy through --system-site-packages)."""
import os
import subprocess
import sys

import mrope

WHEEL_SCRIPT = os.path.join(os.path.dirname(mrope.__file__), os.pardir, "wheel.py")
EXTENSION = mrope._mrope.__file__

CHECK = """
import mrope, numpy as np
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


def test_wheel_installs_offline_in_a_fresh_venv(tmp_path):
    wheel = run(sys.executable, WHEEL_SCRIPT, "--extension", EXTENSION, "--version", "0+test",
                "--out", str(tmp_path / "dist"), cwd=tmp_path).strip()
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--system-site-packages", str(venv), cwd=tmp_path)
    python = str(venv / "bin" / "python3")
    run(python, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", "-q", wheel,
        cwd=tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert run(python, "-c", CHECK, cwd=elsewhere).strip() == "[[0, 1, 2]] [[0]]"
