"""mrope's vLLM plugin (mrope.integrations.vllm) in the pinned vLLM, on the CPU: with the
wheel's entry point declared (a dist-info with python/wheel.py's entry_points.txt on sys.path),
vLLM's own load_general_plugins() loads it; the M-RoPE layer vLLM's get_rope makes is mrope's;
each covered model class's get_mrope_input_positions returns what vLLM's own method returns, on
the seeded random prompts of the differential tests; and vLLM's M-RoPE kernel test cases
(vLLM's tests/kernels/core/test_mrope.py: its checkpoints, tp 1 and 2, bfloat16, 11 and 8192
tokens, its tolerances) hold between mrope's forward and vLLM's forward_native.
"""
import functools
import os
import sys

import numpy as np
import pytest
import torch

import golden
import reference_env
import reference_prompts
import test_reference_vllm

REFERENCE = next(iter(reference_env.pinned("vllm").values()))
CASES = 4  # requests per class

# Covered class -> the prompts' family whose ids and layout its checkpoints use.
CLASSES = {
    "qwen2_vl.Qwen2VLForConditionalGeneration": "qwen2_vl",
    "qwen2_5_vl.Qwen2_5_VLForConditionalGeneration": "qwen2_5_vl",
    "qwen3_vl.Qwen3VLForConditionalGeneration": "qwen3_vl",
    "qwen3_vl_moe.Qwen3VLMoeForConditionalGeneration": "qwen3_vl",
    "qwen3_5.Qwen3_5ForConditionalGeneration": "qwen3_5",
    "qwen3_5.Qwen3_5MoeForConditionalGeneration": "qwen3_5",
}

# vLLM's test_mrope.py checkpoints: their text configs' attention and rope values (the
# checkpoints' config.json; vLLM reads them with get_config, which needs the Hub).
CHECKPOINTS = {
    "zai-org/GLM-4.1V-9B-Thinking": dict(
        num_heads=32, num_kv_heads=2, head_dim=128, max_position=65536,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                         "partial_rotary_factor": 0.5, "mrope_section": [8, 12, 12]}),
    "Qwen/Qwen2-VL-7B-Instruct": dict(
        num_heads=28, num_kv_heads=4, head_dim=128, max_position=32768,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0,
                         "mrope_section": [16, 24, 24]}),
    "Qwen/Qwen2-VL-72B-Instruct": dict(
        num_heads=64, num_kv_heads=8, head_dim=128, max_position=32768,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0,
                         "mrope_section": [16, 24, 24]}),
    "Qwen/Qwen2.5-VL-72B-Instruct": dict(
        num_heads=64, num_kv_heads=8, head_dim=128, max_position=128000,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0,
                         "mrope_section": [16, 24, 24]}),
    "Qwen/Qwen3-VL-4B-Instruct": dict(
        num_heads=32, num_kv_heads=8, head_dim=128, max_position=262144,
        rope_parameters={"rope_type": "default", "rope_theta": 5000000.0,
                         "mrope_section": [24, 20, 20], "mrope_interleaved": True}),
    "Qwen/Qwen3-VL-30B-A3B-Instruct": dict(
        num_heads=32, num_kv_heads=4, head_dim=128, max_position=262144,
        rope_parameters={"rope_type": "default", "rope_theta": 5000000.0,
                         "mrope_section": [24, 20, 20], "mrope_interleaved": True}),
}
ATOL, RTOL = 1e-2, 1.6e-2  # vLLM's MRoPETestInfo defaults
ROPE_CASES = [(name, tp, tokens) for name in CHECKPOINTS for tp in (1, 2)
              for tokens in (11, 8192)]


def _rope_case(name, tp, tokens):
    config = CHECKPOINTS[name]
    return dict(config, num_heads=config["num_heads"] // tp,
                num_kv_heads=max(1, config["num_kv_heads"] // tp), num_tokens=tokens,
                dtype=torch.bfloat16, atol=ATOL, rtol=RTOL)


def _requests(family):
    return [r[:2] for r in test_reference_vllm.requests(family, CASES, seed=0)]


@functools.lru_cache(maxsize=None)
def outputs(dist_dir):
    request = {
        "positions": {c: (reference_prompts.FAMILY_CONFIG[f], _requests(f))
                      for c, f in CLASSES.items()},
        "rope_cases": [_rope_case(*c) for c in ROPE_CASES],
    }
    # VLLM_PLUGINS unset: vLLM loads every plugin of the group; MROPE_VLLM unset: the default
    # parts.
    return reference_env.run("vllm_plugin_runner.py", REFERENCE[1], request, with_mrope=True,
                             site=dist_dir, unset=("VLLM_PLUGINS", "MROPE_VLLM"))


def entry_point_site(tmp_path_factory):
    """A directory holding a dist-info of mrope that declares the wheel's entry points
    (python/wheel.py's ENTRY_POINTS), as an installed wheel does, for the runtimes' loaders."""
    dist_dir = tmp_path_factory.mktemp("site")
    info = dist_dir / "mrope-0.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mrope\nVersion: 0.0.0\n")
    wheel = golden.load_script("mrope_wheel",
                               os.path.join(golden.REPO_DIR, "python", "wheel.py"))
    (info / "entry_points.txt").write_text(wheel.entry_points_txt(wheel.ENTRY_POINTS))
    return str(dist_dir)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """The runner's outputs, with the wheel's entry points on its sys.path."""
    return outputs(entry_point_site(tmp_path_factory))


def test_vllm_loader_finds_and_runs_the_plugin(results):
    assert "mrope = mrope.integrations.vllm:register" in results["plugins"]
    assert results["applied"] == ["fused", "positions", "rotary"]
    log = results["log"]
    # On the CPU the fused part is not applied, in one line naming it; the others are.
    assert log.count("fused attention not applied") == 1, log
    assert "MRotaryEmbedding is mrope's" in log, log
    assert "skipped" not in log, log


@pytest.mark.parametrize("name", list(CLASSES))
def test_positions_equal_vllms(results, name):
    pairs = results["positions"][name]
    assert len(pairs) == CASES
    for i, ((ours, our_delta), (theirs, their_delta)) in enumerate(pairs):
        where = f"{name} request {i}"
        assert ours.dtype == theirs.dtype, where
        np.testing.assert_array_equal(ours, theirs, err_msg=where)
        assert our_delta == their_delta, where


@pytest.mark.parametrize("index", range(len(ROPE_CASES)),
                         ids=["%s-tp%d-T%d" % c for c in ROPE_CASES])
def test_vllm_mrope_cases(results, index):
    """q and k of mrope's layer within vLLM's tolerances of vLLM's forward_native (compared
    in the runner: 8192-token cases are too large to send back)."""
    module, covered, mismatches = results["rope"][index]
    assert module == "mrope.integrations.vllm"  # the layer vLLM's get_rope made is mrope's
    assert covered
    assert not mismatches, "\n".join(mismatches)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__] + sys.argv[1:]))
