"""mrope's rotary of the families vLLM alone defines (Isaac, Keye-VL, openPangu-VL) against the
text rotary the installed vLLM's own model code builds from the same config.json
(reference_runner_vllm_rotary.py, in a process of that vLLM): the family's examples/configs/
vllm_families file with its rotary keys varied.

- Where vLLM builds a layer, mrope loads the config.json; cos/sin [T, rotary_dim / 2]
  (mrope.cuda.cos_sin) within 4 ulp of the layer's forward_native, q and k rotated by mrope's
  kernel (host harness) within 4 ulp of |x| of the layer's own. Isaac's sections are vLLM's
  [d // 4, d // 8, d // 8] of the top-level head_dim, whatever config.json's mrope_section says;
  without head_dim, IsaacConfig's (Qwen3Config's) 128. openPangu-VL's mrope_interleaved is
  vLLM's MRotaryEmbeddingInterleaved (mrope's pangu_interleaved layout).
- Where vLLM refuses the config (its MRotaryEmbedding asserts that the sections fill the
  rotary), mrope refuses it too (ValueError).
- Where vLLM builds a layer other than the config says (REFUSED), mrope refuses it, and the
  layer shows why.

Option (conftest.py): --seed S.
"""
import copy
import functools
import json
import os

import numpy as np
import pytest

import golden
import mrope
import mrope.cuda as mc
import reference_env
from mrope import _capi
from test_reference_rotary import ulps

REFERENCE = next(iter(reference_env.pinned("vllm").values()))
CONFIG_DIR = os.path.join(golden.REPO_DIR, "examples", "configs", "vllm_families")
TOKENS = 24
POSITIONS = 1 << 15


def _isaac_flat(doc):
    """IsaacConfig's flat form (its text keys at the top level, text_config made from them)."""
    text = doc.pop("text_config")
    doc.update({k: v for k, v in text.items() if k != "model_type"})


# (case, family, the text object's changes, the top level's changes, a function of the doc)
CASES = [
    ("isaac-head_dim_64", "isaac", {"head_dim": 64}, {"head_dim": 64}, None),
    ("isaac-head_dim_128", "isaac", {}, {}, None),
    ("isaac-head_dim_256", "isaac", {"head_dim": 256}, {"head_dim": 256}, None),
    # config.json's mrope_section is overwritten; its mrope_interleaved is read.
    ("isaac-flat_sections_interleaved", "isaac",
     {"head_dim": 64, "rope_parameters": {"rope_type": "default", "rope_theta": 5e5,
                                          "mrope_section": [8, 12, 12],
                                          "mrope_interleaved": True}}, {}, _isaac_flat),
    # Refused by vLLM: [17, 8, 8] does not fill 34 pairs; text_config's 64 beside IsaacConfig's
    # own head_dim, 128 by default.
    ("isaac-head_dim_68", "isaac", {"head_dim": 68}, {"head_dim": 68}, None),
    ("isaac-text_head_dim_only", "isaac", {"head_dim": 64}, {}, None),
    # No head_dim: IsaacConfig's and its text_config's are Qwen3Config's 128, not 2048 / 32.
    ("isaac-no_head_dim", "isaac", {"head_dim": None, "hidden_size": 2048}, {}, None),
    ("isaac-flat_no_head_dim", "isaac", {"head_dim": None, "hidden_size": 2048}, {},
     _isaac_flat),
    ("keye-preset", "keye", {}, {}, None),
    ("keye-head_dim_64", "keye",
     {"head_dim": 64, "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]}}, {}, None),
    ("keye-interleaved", "keye",
     {"rope_scaling": {"rope_type": "default", "mrope_section": [24, 20, 20],
                       "mrope_interleaved": True}}, {}, None),
    ("keye-no_sections", "keye", {"rope_scaling": None}, {}, None),
    ("openpangu_vl-preset", "openpangu_vl", {}, {}, None),
    ("openpangu_vl-head_dim_64", "openpangu_vl",
     {"head_dim": 64, "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]}}, {}, None),
    ("openpangu_vl-interleaved", "openpangu_vl",
     {"rope_scaling": {"rope_type": "default", "mrope_section": [24, 20, 20],
                       "mrope_interleaved": True}}, {}, None),
    ("openpangu_vl-interleaved_16_24_24", "openpangu_vl",
     {"rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24],
                       "mrope_interleaved": True}}, {}, None),
    ("openpangu_vl-interleaved_head_dim_64", "openpangu_vl",
     {"head_dim": 64, "rope_scaling": {"rope_type": "default", "mrope_section": [3, 15, 14],
                                       "mrope_interleaved": True}}, {}, None),
    ("openpangu_vl-interleaved_no_t", "openpangu_vl",
     {"rope_scaling": {"rope_type": "default", "mrope_section": [0, 32, 32],
                       "mrope_interleaved": True}}, {}, None),
    ("openpangu_vl-interleaved_linear", "openpangu_vl",
     {"rope_scaling": {"rope_type": "linear", "factor": 4.0, "mrope_section": [24, 20, 20],
                       "mrope_interleaved": True}}, {}, None),
]
# vLLM builds these, but not as config.json says: mrope refuses them (the message's reason).
REFUSED = {
    # MRotaryEmbeddingInterleaved always gives t the last pair (and h or w one too few).
    "openpangu_vl-interleaved_no_t": "its t entry must be >= 1",
    # openPangu's _init_rotary_emb replaces the rope_type of interleaved sections: unscaled.
    "openpangu_vl-interleaved_linear": "take unscaled RoPE",
}
IDS = [c[0] for c in CASES]


def config_json(family, text_changes, top_changes, reshape):
    with open(os.path.join(CONFIG_DIR, family + ".json")) as f:
        doc = json.load(f)
    text = doc.get("text_config", doc)
    for key, value in text_changes.items():
        if value is None:
            text.pop(key, None)
        else:
            text[key] = copy.deepcopy(value)
    doc.update(top_changes)
    if reshape is not None:
        reshape(doc)
    return doc


@functools.lru_cache(maxsize=None)
def cases(seed):
    out = []
    for index, (name, family, text, top, reshape) in enumerate(CASES):
        rng = np.random.default_rng([seed, index])
        out.append({"name": name, "family": family,
                    "config": config_json(family, text, top, reshape),
                    "positions": rng.integers(0, POSITIONS, (3, TOKENS)),
                    "seed": [seed, index]})
    return out


@functools.lru_cache(maxsize=None)
def reference_outputs(seed):
    request = {"cases": [{k: v for k, v in c.items() if k != "name"} for c in cases(seed)]}
    return reference_env.run("reference_runner_vllm_rotary.py", REFERENCE[1], request)


def mrope_model(case, tmp_path):
    path = tmp_path / f"{case['name']}.json"
    path.write_text(json.dumps(case["config"]))
    return mrope.Model.from_config(path)


def test_reference_is_the_pinned_release(request):
    version = reference_outputs(request.config.getoption("seed"))["version"]
    assert "vllm==" + version == next(iter(reference_env.pinned("vllm")))


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_rotary_is_vllms(index, request, tmp_path):
    seed = request.config.getoption("seed")
    case = cases(seed)[index]
    theirs = reference_outputs(seed)["results"][index]
    where = case["name"]
    if "error" in theirs:
        with pytest.raises(ValueError, match="head_dim"):
            mrope_model(case, tmp_path)
        return
    if where in REFUSED:
        with pytest.raises(ValueError, match=REFUSED[where]):
            mrope_model(case, tmp_path)
        return
    assert theirs["neox"], where
    expect_rotary(mrope_model(case, tmp_path), case["positions"], theirs, where)


def expect_rotary(model, positions, theirs, where):
    """`model`'s cos/sin and kernel rotation at `positions` are vLLM's layer's (`theirs`)."""
    positions = positions if theirs["mrope_section"] else positions[0]
    cos, sin = mc.cos_sin(positions, model)
    for name, ours in (("cos", cos), ("sin", sin)):
        assert ours.shape == theirs[name].shape, where
        assert ulps(ours, theirs[name]).max() <= 4, f"{where}: {name}"
    if not _capi.kernels_on_host():
        return
    q, k = theirs["q_in"].copy(), theirs["k_in"].copy()
    flag = np.zeros(1, np.int32)
    mc.apply_mrope_(q, k, np.ascontiguousarray(positions), model, error_flag=flag)
    assert flag[0] == 0
    for name, ours in (("q", q), ("k", k)):
        np.testing.assert_allclose(ours, theirs[name], rtol=0,
                                   atol=4 * np.spacing(np.float32(2)), err_msg=where)


def test_isaac_sections_are_vllms(request):
    """vLLM's own sections for each Isaac case it builds: [d // 4, d // 8, d // 8] of the
    top-level head_dim, whatever config.json's mrope_section (the cos/sin test checks mrope's)."""
    seed = request.config.getoption("seed")
    built = {c["name"]: r["mrope_section"]
             for c, r in zip(cases(seed), reference_outputs(seed)["results"])
             if c["family"] == "isaac" and "error" not in r}
    assert built == {"isaac-head_dim_64": [16, 8, 8], "isaac-head_dim_128": [32, 16, 16],
                     "isaac-head_dim_256": [64, 32, 32],
                     "isaac-flat_sections_interleaved": [16, 8, 8],
                     "isaac-no_head_dim": [32, 16, 16], "isaac-flat_no_head_dim": [32, 16, 16]}


def test_refused_configs_are_not_built_as_said(request, tmp_path):
    """What vLLM builds for the REFUSED cases: t's pair where config.json gives t none, and
    interleaved sections without the linear scaling (its cos/sin are those of rope_type
    default)."""
    seed = request.config.getoption("seed")
    built = {c["name"]: (c, r) for c, r in zip(cases(seed), reference_outputs(seed)["results"])}
    _, no_t = built["openpangu_vl-interleaved_no_t"]
    assert no_t["layer"] == "MRotaryEmbeddingInterleaved"
    assert no_t["mrope_section"] == [0, 32, 32]
    assert [no_t["axes"].count(a) for a in range(3)] == [1, 32, 31]
    case, linear = built["openpangu_vl-interleaved_linear"]
    assert linear["layer"] == "MRotaryEmbeddingInterleaved"
    unscaled = copy.deepcopy(case)
    unscaled["config"]["text_config"]["rope_scaling"] = {
        "rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": True}
    expect_rotary(mrope_model(unscaled, tmp_path), case["positions"], linear, case["name"])


def test_pangu_interleaved_counts_are_the_sections(request):
    """vLLM's MRotaryEmbeddingInterleaved gives each axis its section's pairs where t has one
    (the cos/sin test checks that mrope's pangu_interleaved order is vLLM's pair by pair)."""
    seed = request.config.getoption("seed")
    for case, theirs in zip(cases(seed), reference_outputs(seed)["results"]):
        if theirs.get("axes") is None or case["name"] in REFUSED:
            continue
        counts = [theirs["axes"].count(a) for a in range(3)]
        assert counts == theirs["mrope_section"], case["name"]
