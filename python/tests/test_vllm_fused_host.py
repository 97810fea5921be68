"""The vLLM plugin's fused QK-norm + M-RoPE prologue (the `fused` part, applied on CUDA only)
on the CPU through the host-harness kernels (//python:pytest_vllm_fused_host): equal, within
fp32 rounding, to the per-head RMSNorm followed by the plugin's rotation it replaces
(vllm_fused_runner.py, in a process with the pinned vLLM)."""
import os
import pickle
import subprocess

import mrope
import reference_env


def test_fused_prologue_equals_norm_then_rotation():
    package = os.path.dirname(os.path.dirname(os.path.abspath(mrope.__file__)))
    target = next(iter(reference_env.pinned("vllm").values()))[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [package, os.path.join(reference_env.env_dir(), "targets", target)]))
    process = subprocess.run(
        [os.path.join(reference_env.env_dir(), "bin", "python"),
         os.path.join(reference_env.TESTS_DIR, "vllm_fused_runner.py")],
        capture_output=True, env=env)
    assert process.returncode == 0, process.stderr.decode()[-4000:]
    results = pickle.loads(process.stdout)
    assert [r[0] for r in results] == ["weight", "one_plus_weight"]
    for norm, q_error, k_error, flag in results:
        assert q_error < 1e-5 and k_error < 1e-5, (norm, q_error, k_error)
        assert flag == 0, norm
