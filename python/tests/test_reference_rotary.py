"""mrope's cos/sin against the text rotary module of each family's installed reference, run
live: the family's config.json (examples/configs) builds both mrope's model and the reference's
module (its own text config class), the differential tests' seeded random prompts
(reference_prompts.py) give the positions (mrope's, which test_reference_transformers.py checks
bit for bit against the same reference), and Plan.cos_sin(layout="hf") must equal what the
module returns for them within 4 ulp of float32 (reference_rotary_runner.py, in a process of
that transformers).

Options (conftest.py): --cases N prompts per family, --seed S.
"""
import functools
import json
import os
import sys

import numpy as np
import pytest

import golden
import mrope
import reference_env
import reference_prompts

# family: (config.json, the rotary module, its config class, the transformers release).
ROTARY = {
    "qwen4_exp": ("examples/configs/v5_defaults/qwen4_exp.json",
                  "qwen4_exp.modeling_qwen4_exp.Qwen4ExpTextRotaryEmbedding",
                  "qwen4_exp.configuration_qwen4_exp.Qwen4ExpTextConfig", (5, 23)),
    "cosmos3_omni": ("examples/configs/v5_defaults/cosmos3_omni.json",
                     "qwen3_vl.modeling_qwen3_vl.Qwen3VLTextRotaryEmbedding",
                     "qwen3_vl.configuration_qwen3_vl.Qwen3VLTextConfig", (5, 23)),
    "cosmos3_edge": ("examples/configs/v5_defaults/cosmos3_edge.json",
                     "cosmos3_edge.modeling_cosmos3_edge.Cosmos3EdgeTextRotaryEmbedding",
                     "cosmos3_edge.configuration_cosmos3_edge.Cosmos3EdgeTextConfig", (5, 23)),
}
MAX_ULP = 4


@functools.lru_cache(maxsize=None)
def _reference(family):
    """(pinned version tuple, target directory) of the transformers release `family` names."""
    release = ROTARY[family][3]
    for pinned, target in reference_env.pinned("transformers").values():
        if pinned[:len(release)] == release:
            return pinned, target
    raise AssertionError(f"transformers {release} is not pinned")


def _config(family):
    with open(os.path.join(golden.REPO_DIR, ROTARY[family][0])) as f:
        return json.load(f)


@functools.lru_cache(maxsize=None)
def model_for(family):
    return mrope.Model.from_config(os.path.join(golden.REPO_DIR, ROTARY[family][0]))


@functools.lru_cache(maxsize=None)
def cases(family, count, seed):
    """(prompt, mrope's positions) of `count` prompts."""
    found = []  # the differential tests' prompts (seeded by the pinned version)
    for prompt in reference_prompts.random_prompts(family, _reference(family)[0], count, seed):
        kwargs = {k: prompt[k] for k in ("attention_mask", "mm_token_type_ids",
                                         "image_grid_thw", "video_grid_thw")
                  if prompt[k] is not None}
        positions, _ = model_for(family).get_rope_index(prompt["input_ids"], **kwargs)
        found.append((prompt, kwargs, np.asarray(positions)))
    return found


@functools.lru_cache(maxsize=None)
def reference_outputs(family, count, seed):
    _, module, config_class, _ = ROTARY[family]
    request = {"module": module, "config": config_class,
               "config_values": _config(family)["text_config"],
               "positions": [positions for _, _, positions in cases(family, count, seed)]}
    return reference_env.run("reference_rotary_runner.py", _reference(family)[1], request)


def ulp_distance(a, b):
    """|a - b| in float32 units in the last place (both finite, same sign around 0 counted
    through it)."""
    ia = a.astype(np.float32).view(np.int32).astype(np.int64)
    ib = b.astype(np.float32).view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, np.int64(-2**31) - ia, ia)
    ib = np.where(ib < 0, np.int64(-2**31) - ib, ib)
    return np.abs(ia - ib)


def pytest_generate_tests(metafunc):
    if "index" in metafunc.fixturenames:
        count = metafunc.config.getoption("cases")
        params = [(f, i) for f in ROTARY for i in range(count)]
        metafunc.parametrize("family,index", params, ids=[f"{f}-{i}" for f, i in params])
    elif "family" in metafunc.fixturenames:
        metafunc.parametrize("family", list(ROTARY))


def test_config_json_is_the_preset(family):
    """The config.json the rotary is checked with gives the preset's cos/sin."""
    preset = mrope.Model.from_config(family)
    assert model_for(family).family == preset.family == family
    prompt, kwargs, positions = cases(family, 1, 0)[0]
    ours = model_for(family).plan(prompt["input_ids"], **kwargs).cos_sin(layout="hf")
    theirs = preset.plan(prompt["input_ids"], **kwargs).cos_sin(layout="hf")
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])


def test_cos_sin(family, index, request):
    count, seed = request.config.getoption("cases"), request.config.getoption("seed")
    prompt, kwargs, positions = cases(family, count, seed)[index]
    outputs = reference_outputs(family, count, seed)
    where = f"transformers {outputs['version']} {outputs['source']}, prompt {prompt['layout']}"
    theirs = outputs["results"][index]
    cos, sin = model_for(family).plan(prompt["input_ids"], **kwargs).cos_sin(layout="hf")
    assert cos.shape == theirs["cos"].shape, where
    for name, ours, want in (("cos", cos, theirs["cos"]), ("sin", sin, theirs["sin"])):
        distance = ulp_distance(ours, want)
        worst = np.unravel_index(np.argmax(distance), distance.shape)
        assert distance.max() <= MAX_ULP, (
            f"{where}: {name}{list(worst)} {ours[worst]!r} vs {want[worst]!r} "
            f"({distance.max()} ulp)")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__] + sys.argv[1:]))
