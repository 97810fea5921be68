"""mrope inside the real model: tiny random-weight models (tiny_models.py: 2 text layers, small
hidden and vision sizes, seeded init, no downloads) of Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5,
GLM-4.1V and the Qwen2.5-Omni thinker, in each transformers release of the test environment
(reference_runner_tiny.py, in that release's process), on the CPU in fp32: greedy generate()
with mrope's positions in place of the model's own gives the same tokens and logits (within
1e-6) for text, image, video and mixed prompts, left-padded batches of 2-4 rows
(reference_prompts.py's processor layout, pixel values of the grids' sizes).

Two ways in: the model's get_rope_index replaced by the preset the differential tests
(test_reference_transformers.py) compare with that release ("mrope": the convention mrope's
release table resolves for it), and mrope.integrations.transformers.enable() for the classes
and for one instance, under the same convention. Not covered: Omni audio (no
input_features built), and for GLM-4.1V a batch with both images and videos (its
get_placeholder_mask places video frames as image tokens: transformers' forward() refuses it).
transformers 5.x computes text-only prompts' positions without get_rope_index.
"""
import functools

import numpy as np
import pytest

import reference_env
import reference_prompts
import test_reference_transformers
from mrope import _mrope

FAMILIES = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_5", "glm4v", "qwen2_5_omni")
NEW_IN_V5 = ("qwen3_5",)
KINDS = ("text", "image", "video", "mixed")
MAX_NEW_TOKENS = 3
MAX_TOKENS = 96  # a prompt's padded length: keeps the whole file about a minute on 2 cores
TOLERANCE = 1e-6
REFERENCES = reference_env.pinned("transformers")
SEED = 33


def families(version):
    return tuple(f for f in FAMILIES if version >= (5, 0) or f not in NEW_IN_V5)


def kinds(family):
    return tuple(k for k in KINDS if not (family == "glm4v" and k == "mixed"))


def _kind(prompt):
    media = {k for k in ("image", "video") if prompt[k + "_grid_thw"] is not None}
    return {frozenset(): "text", frozenset({"image"}): "image", frozenset({"video"}): "video",
            frozenset({"image", "video"}): "mixed"}[frozenset(media)]


@functools.lru_cache(maxsize=None)
def prompts(version, family):
    """One left-padded batch (2-4 rows of unequal length, no audio) of each kind."""
    rng = np.random.default_rng([SEED, FAMILIES.index(family), *version])
    found = {}
    while len(found) < len(kinds(family)):
        prompt = reference_prompts.random_prompt(rng, family, version)
        mask = prompt["attention_mask"]
        if (prompt["layout"].startswith("left ") and len(mask) >= 2 and not mask.all() and
                mask.shape[1] <= MAX_TOKENS and prompt["audio_seqlens"] is None and
                not prompt["use_audio_in_video"] and _kind(prompt) in kinds(family)):
            found.setdefault(_kind(prompt), prompt)
    return tuple(found[k] for k in kinds(family))


def preset(version, family):
    """(preset, overrides) the differential tests compare with `version`: the family's preset
    under the convention mrope's release table resolves for the release."""
    return _mrope.convention_preset(family, test_reference_transformers.convention(version)), {}


@functools.lru_cache(maxsize=None)
def outputs(reference):
    version = REFERENCES[reference][0]
    request = {"max_new_tokens": MAX_NEW_TOKENS, "families": {}}
    for family in families(version):
        name, overrides = preset(version, family)
        request["families"][family] = {
            "ids": reference_prompts.FAMILY_CONFIG[family], "preset": name,
            "overrides": overrides, "prompts": prompts(version, family)}
    return reference_env.run("reference_runner_tiny.py", REFERENCES[reference][1], request,
                             with_mrope=True)


def pytest_generate_tests(metafunc):
    if "kind" in metafunc.fixturenames:
        params = [(r, f, k) for r in REFERENCES for f in families(REFERENCES[r][0])
                  for k in kinds(f)]
        metafunc.parametrize("reference,family,kind", params,
                             ids=[f"{r}-{f}-{k}" for r, f, k in params])
    elif "family" in metafunc.fixturenames:
        params = [(r, f) for r in REFERENCES for f in families(REFERENCES[r][0])]
        metafunc.parametrize("reference,family", params, ids=[f"{r}-{f}" for r, f in params])
    elif "reference" in metafunc.fixturenames:
        metafunc.parametrize("reference", list(REFERENCES))


def _result(reference, family, kind):
    version = REFERENCES[reference][0]
    prompt = prompts(version, family)[kinds(family).index(kind)]
    return prompt, outputs(reference)["results"][family][kinds(family).index(kind)]


def _assert_same(variants, name, where):
    own, theirs = variants["own"], variants[name]
    assert np.array_equal(theirs["tokens"], own["tokens"]), (
        f"{where}, {name}: tokens {theirs['tokens'].tolist()} (own {own['tokens'].tolist()})")
    assert theirs["logits_diff"] <= TOLERANCE, f"{where}, {name}: logits differ by " \
                                               f"{theirs['logits_diff']}"


def _calls_get_rope_index(version, kind):
    return kind != "text" or version < (5, 0)


def test_runs_the_pinned_release(reference):
    report = outputs(reference)
    assert "transformers==" + report["version"] == reference
    assert set(families(REFERENCES[reference][0])) <= set(report["families"])


def test_generate_with_mrope_positions(reference, family, kind):
    prompt, variants = _result(reference, family, kind)
    version = REFERENCES[reference][0]
    where = f"{reference} {family} {preset(version, family)}, prompt {prompt['layout']}"
    _assert_same(variants, "mrope", where)
    if _calls_get_rope_index(version, kind):
        assert variants["mrope"]["mrope_calls"] > 0, f"{where}: mrope was not called"


def test_decode_positions_are_the_models(reference, family, kind):
    """The positions the model's own generate() gives its text rotary at each decode step (in
    4.57.6 forward() computes them from the cached deltas) equal mrope's decode positions."""
    prompt, variants = _result(reference, family, kind)
    version = REFERENCES[reference][0]
    theirs = variants["own"]["decode"]
    ours = test_reference_transformers.mrope_outputs(
        family, test_reference_transformers.convention(version), prompt)["decode"]
    ours = ours[..., :MAX_NEW_TOKENS - 1]
    assert theirs.shape == ours.shape and np.array_equal(theirs, ours), (
        f"{reference} {family}, prompt {prompt['layout']}: decode {theirs.tolist()}, mrope "
        f"{ours.tolist()}")


def test_generate_with_enable(reference, family, kind):
    prompt, variants = _result(reference, family, kind)
    from mrope.integrations import transformers as mrope_hf
    supported = mrope_hf.preset_for(family, reference)[0] is not None
    for name in ("enable_classes", "enable_instance"):
        where = f"{reference} {family}, prompt {prompt['layout']}"
        _assert_same(variants, name, where)
        called = variants[name]["mrope_calls"] > 0  # where the hand-made replacement was
        assert called == (supported and variants["mrope"]["mrope_calls"] > 0), (
            f"{where}, {name}: mrope called {variants[name]['mrope_calls']} times")


def test_enable_replaces_the_covered_families_and_names_the_others(reference, family):
    report = outputs(reference)
    from mrope.integrations import transformers as mrope_hf
    preset_name, why = mrope_hf.preset_for(family, reference)
    if preset_name is not None:  # the convention the differential tests verify
        assert (preset_name, why) == preset(REFERENCES[reference][0], family)
    for name in ("enable_classes", "enable_instance"):
        replaced = report["enable"][family][name]
        if preset_name is not None:
            assert family in replaced, f"{reference} {name}: {replaced}"
        else:
            assert family not in replaced
            assert any(why in w for w in report["warnings"]), (why, report["warnings"])


def test_disable_restores_transformers_methods(reference):
    assert outputs(reference)["not_restored"] == []


def test_a_wrong_position_changes_the_logits(reference, family):
    """mrope's positions with height and width exchanged: the comparison sees them."""
    results = outputs(reference)["results"][family]
    swapped = [variants["swapped"] for variants in results if "swapped" in variants]
    assert len(swapped) == 1
    assert swapped[0]["logits_diff"] > 1e-3, swapped[0]


def test_preset_for_resolves_releases():
    from mrope.integrations import transformers as mrope_hf
    assert mrope_hf.preset_for("qwen2_5_vl", "transformers==4.57.6") == ("qwen2_5_vl_hf", {})
    assert mrope_hf.preset_for("qwen2_vl", "transformers==5.2.0") == ("qwen2_vl_hf_v5_2", {})
    assert mrope_hf.preset_for("qwen2_5_vl", "transformers==5.23.0") == ("qwen2_5_vl_hf_v5_18", {})
    assert mrope_hf.preset_for("qwen2_5_vl", "transformers==5.15.0") == ("qwen2_5_vl_hf_v5", {})
    assert mrope_hf.preset_for("glm4v", "transformers==5.23.0") == ("glm4v_hf_v5", {})
    for release in ("4.44.0", "6.0.0"):  # outside every range of the release table
        preset, why = mrope_hf.preset_for("qwen2_vl", "transformers==" + release)
        assert preset is None and f"transformers {release} is not a release" in why, why
    with pytest.raises(ValueError, match="convention"):
        mrope_hf.preset_for("qwen2_vl", "hf_v5")


def test_enable_warns_and_replaces_nothing_it_does_not_cover():
    """enable() never raises for what mrope does not cover: one warning names it and
    transformers' code stays (here, in the test process: transformers of the venv)."""
    import torch
    import tiny_models
    from mrope.integrations import transformers as mrope_hf
    classes = {f: c for f, c in mrope_hf._classes().items() if c is not None}
    own = {f: c.__dict__.get("get_rope_index") for f, c in classes.items()}
    with pytest.warns(mrope_hf.MropeTransformersWarning, match="Linear holds no model class"):
        assert mrope_hf.enable(torch.nn.Linear(2, 2)) == ()
    with pytest.warns(mrope_hf.MropeTransformersWarning, match="transformers 4.44.0 is not a"):
        assert mrope_hf.enable(convention="transformers==4.44.0") == ()
    assert {f: c.__dict__.get("get_rope_index") for f, c in classes.items()} == own

    model = tiny_models.build("qwen2_vl", reference_prompts.FAMILY_CONFIG["qwen2_vl"])
    assert mrope_hf.enable(model) == ("qwen2_vl",)
    assert "get_rope_index" in model.model.__dict__
    mrope_hf.disable(model)
    assert "get_rope_index" not in model.model.__dict__
    model.model.config.vision_config.spatial_merge_size = 0  # a value mrope refuses
    with pytest.warns(mrope_hf.MropeTransformersWarning, match="spatial_merge_size"):
        assert mrope_hf.enable(model) == ()
    assert "get_rope_index" not in model.model.__dict__
