"""mrope's SGLang plugin (mrope.integrations.sglang) in the pinned SGLang, on the CPU: with the
wheel's entry point declared (a dist-info with python/wheel.py's entry_points.txt on sys.path),
SGLang's own load_plugins() loads it and applies its HookRegistry hooks; SGLang's
MRotaryEmbedding.get_rope_index, hooked, returns what SGLang's own returns on the seeded random
prompts of the differential tests (one row a request, as SGLang's scheduler calls it).
"""
import sys

import numpy as np
import pytest

import reference_env
import reference_prompts
import test_reference_vllm_plugin

REFERENCE = next(iter(reference_env.pinned("sglang").values()))
CASES = 6  # rows per model type
# SGLang's model_type -> the prompts' family and the processor layout (transformers version).
# Qwen3-VL videos in the layout of transformers >= 5.10 (the outer <vision_start> before the
# first timestamp) are refused by mrope's qwen3_vl_hf_v5_2 rules and go to SGLang's own
# (logged): the test takes 5.2's layout, where mrope computes every request.
MODEL_TYPES = {"qwen2_vl": ("qwen2_vl", (5, 23)), "qwen2_5_vl": ("qwen2_5_vl", (5, 23)),
               "qwen3_vl": ("qwen3_vl", (5, 2))}


def requests(family, version):
    """(input_ids, image grids, video grids, seconds per grid or None) of the prompts' rows."""
    found = []
    for prompt in reference_prompts.random_prompts(family, version, CASES, seed=0):
        for b, features in enumerate(prompt["features"]):
            mask = prompt["attention_mask"][b].astype(bool)
            grid = lambda m: [list(f[3]) for f in features if f[0] == m]
            # Only Qwen2.5-VL's requests carry seconds per grid.
            seconds = [float(f[4]) for f in features
                       if f[0] == "video" and family == "qwen2_5_vl"]
            found.append((prompt["input_ids"][b][mask].tolist(), grid("image"), grid("video"),
                          seconds or None))
    return found[:CASES]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """The runner's outputs, with the wheel's entry points on its sys.path (SGLANG_PLUGINS and
    MROPE_SGLANG unset: every plugin of the group, the default parts)."""
    request = {"families": {t: (reference_prompts.FAMILY_CONFIG[f], requests(f, v))
                            for t, (f, v) in MODEL_TYPES.items()}}
    return reference_env.run("sglang_plugin_runner.py", REFERENCE[1], request, with_mrope=True,
                             site=test_reference_vllm_plugin.entry_point_site(tmp_path_factory),
                             unset=("SGLANG_PLUGINS", "MROPE_SGLANG"))


def test_sglang_loader_finds_and_applies_the_plugin(results):
    assert "mrope = mrope.integrations.sglang:register" in results["plugins"]
    prefix = "sglang.srt.layers.rotary_embedding.mrope.MRotaryEmbedding."
    assert {prefix + "get_rope_index", prefix + "forward_cuda"} <= set(results["hooked"])
    assert "skipped" not in results["log"], results["log"]
    assert "went to SGLang's" not in results["log"], results["log"]  # mrope computed them all


@pytest.mark.parametrize("model_type", list(MODEL_TYPES))
def test_positions_equal_sglangs(results, model_type):
    pairs = results["positions"][model_type]
    assert len(pairs) == CASES
    for i, ((ours, our_deltas), (theirs, their_deltas)) in enumerate(pairs):
        where = f"{model_type} request {i}"
        np.testing.assert_array_equal(ours, theirs, err_msg=where)
        assert ours.dtype == theirs.dtype, where
        np.testing.assert_array_equal(our_deltas, their_deltas, err_msg=where)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__] + sys.argv[1:]))
