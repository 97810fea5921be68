"""mrope against the transformers releases installed in the test environment
(python/requirements-test.txt), run live: seeded random processor-shaped prompts
(reference_prompts.py) through each release's own get_rope_index and generate() step
(reference_runner.py, in a process of that release), compared bit for bit with mrope's
get_rope_index and decode positions under the convention mrope's release table names for the
release (Model.from_config(family, convention="transformers==<release>")): values, dtypes,
padding slots, deltas. Differences mrope keeps are the rows of reference_differences.py.

Options (conftest.py): --cases N prompts per family and release, --seed S, --generate-cases G
(the Omni thinkers' generate() decodes the first G).
"""
import functools
import sys

import numpy as np
import pytest

import mrope
import reference_differences
import reference_env
import reference_prompts

FAMILIES = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "glm4v", "qwen3_5", "qwen3_5_moe", "glm46v",
            "paddleocr_vl", "qwen2_5_omni", "qwen3_omni", "ernie4_5_vl_moe", "glm_image",
            "qwen4_exp", "cosmos3_omni", "cosmos3_edge", "cohere_compass",
            "hunyuan_vl")
# Families new in transformers 5.x.
NEW_IN_V5 = ("qwen3_5", "qwen3_5_moe", "glm46v", "paddleocr_vl", "ernie4_5_vl_moe", "glm_image")
OMNI = ("qwen2_5_omni", "qwen3_omni")
# Families given the processor's mm_token_type_ids under every convention (Qwen3.5's outer
# <vision_start> ... <vision_end> around a video's frames is parsed from them only: a token
# scan refuses it; ERNIE needs them); the others get them where their release's get_rope_index
# takes them (its positional arguments, mrope/model/model_family.cc).
TYPED_BLOCKS = ("qwen3_5", "qwen3_5_moe", "paddleocr_vl", "ernie4_5_vl_moe")
# Families new after 5.3: the first release with each; their one preset follows it (hf_v5, given
# mm_token_type_ids as every hf_v5 preset is).
FIRST_RELEASE = {"qwen4_exp": (5, 23), "cosmos3_omni": (5, 23), "cosmos3_edge": (5, 23),
                 "cohere_compass": (5, 23),
                 "hunyuan_vl": (5, 23)}
FIELDS = ("positions", "padding", "deltas", "dtypes", "decode")
DECODE_STEPS = 3


REFERENCES = reference_env.pinned("transformers")


def families(version):
    """The FAMILIES transformers `version` has."""
    return tuple(f for f in FAMILIES if (version >= (5, 0) or f not in NEW_IN_V5) and
                 version >= FIRST_RELEASE.get(f, version))


def convention(version):
    """mrope's convention for transformers `version`: resolved by mrope's release table
    (mrope/model/conventions.cc), so the table is what these tests check."""
    return "transformers==" + ".".join(map(str, version))


def pytest_generate_tests(metafunc):
    cases = metafunc.config.getoption("cases")
    if "index" in metafunc.fixturenames:
        params = [(r, f, i) for r in REFERENCES for f in families(REFERENCES[r][0])
                  for i in range(cases)]
        metafunc.parametrize("reference,family,index", params,
                             ids=[f"{r}-{f}-{i}" for r, f, i in params])
    elif "family" in metafunc.fixturenames:  # the pairs with a known difference
        params = [(r, f) for r in REFERENCES for f in families(REFERENCES[r][0])
                  if reference_differences.difference_for(REFERENCES[r][0], f)]
        metafunc.parametrize("reference,family", params, ids=[f"{r}-{f}" for r, f in params])
    elif "reference" in metafunc.fixturenames:
        metafunc.parametrize("reference", list(REFERENCES))


@functools.lru_cache(maxsize=None)
def prompts(reference, family, cases, seed):
    return reference_prompts.random_prompts(family, REFERENCES[reference][0], cases, seed)


@functools.lru_cache(maxsize=None)
def reference_outputs(reference, cases, seed, generate_cases):
    """The release's results for every family's prompts: one process per release; the Omni
    thinkers' decode positions from generate() on the first `generate_cases` prompts."""
    request = {"decode_steps": DECODE_STEPS, "generate_prompts": generate_cases, "families": {
        f: (reference_prompts.FAMILY_CONFIG[f], prompts(reference, f, cases, seed))
        for f in families(REFERENCES[reference][0])}}
    return reference_env.run("reference_runner.py", REFERENCES[reference][1], request)


@pytest.fixture
def case(request):
    """(prompts, the release's outputs) under the run's --cases and --seed."""
    cases, seed = request.config.getoption("cases"), request.config.getoption("seed")
    reference, family = request.getfixturevalue("reference"), request.getfixturevalue("family")
    return prompts(reference, family, cases, seed), reference_outputs(
        reference, cases, seed, request.config.getoption("generate_cases"))


@functools.lru_cache(maxsize=None)
def model_for(family, convention, overrides=()):
    return mrope.Model.from_config(
        family, convention=convention,
        overrides={**reference_prompts.FAMILY_CONFIG[family], **dict(overrides)})


def mrope_outputs(family, convention, prompt, overrides=None):
    """mrope's positions, deltas and decode positions of `prompt` under `convention` (a
    release spec or a convention name, as Model.from_config takes it)."""
    model = model_for(family, convention, tuple(sorted((overrides or {}).items())))
    kwargs = {k: prompt[k] for k in ("attention_mask", "image_grid_thw", "video_grid_thw",
                                     "second_per_grid_ts") if prompt[k] is not None}
    if family in OMNI:  # the thinkers' names
        kwargs["second_per_grids"] = kwargs.pop("second_per_grid_ts", None)
        kwargs.update(audio_seqlens=prompt["audio_seqlens"],
                      use_audio_in_video=prompt["use_audio_in_video"])
    if family == "glm_image":
        kwargs["images_per_sample"] = prompt["images_per_sample"]
    # mm_token_type_ids where the convention's get_rope_index reads them (hf_v5 but the Omni
    # thinkers', model._positional: the family row's rope_index) or the family needs them.
    if "mm_token_type_ids" in model._positional or family in TYPED_BLOCKS:
        kwargs["mm_token_type_ids"] = prompt["mm_token_type_ids"]
    positions, deltas = model.get_rope_index(prompt["input_ids"], **kwargs)
    decode = model.plan(prompt["input_ids"], **kwargs).decode_positions(DECODE_STEPS)
    return {"positions": np.asarray(positions), "deltas": np.asarray(deltas),
            "decode": np.asarray(decode)}


def differing_fields(ours, theirs, prompt):
    """The FIELDS in which mrope's outputs differ from the reference's."""
    real = prompt["attention_mask"].astype(bool)
    fields = []
    if not np.array_equal(ours["positions"][:, real], theirs["positions"][:, real]):
        fields.append("positions")
    if not np.array_equal(ours["positions"][:, ~real], theirs["positions"][:, ~real]):
        fields.append("padding")
    if not np.array_equal(ours["deltas"], theirs["deltas"]):
        fields.append("deltas")
    if (ours["positions"].dtype != theirs["positions"].dtype or
            ours["deltas"].dtype != theirs["deltas"].dtype or
            ours["positions"].shape != theirs["positions"].shape or
            ours["deltas"].shape != theirs["deltas"].shape):
        fields.append("dtypes")
    if "decode" in theirs and not np.array_equal(ours["decode"], theirs["decode"]):
        fields.append("decode")  # transformers 4 decodes inside forward(): not run here
    return fields


def test_reference_is_the_pinned_release(reference, request):
    outputs = reference_outputs(reference, request.config.getoption("cases"),
                                request.config.getoption("seed"),
                                request.config.getoption("generate_cases"))
    assert "transformers==" + outputs["version"] == reference
    assert outputs["torch"].startswith("2.15.0")


def test_omni_decode_comes_from_generate(reference, request):
    """The Omni thinkers' decode is compared: generate() ran on the first --generate-cases
    prompts of each (a runner that skipped it would compare get_rope_index only)."""
    cases = request.config.getoption("cases")
    generate_cases = request.config.getoption("generate_cases")
    outputs = reference_outputs(reference, cases, request.config.getoption("seed"),
                                generate_cases)
    for family in OMNI:
        decoded = ["decode" in result for result in outputs["results"][family]]
        assert decoded == [i < generate_cases for i in range(cases)], family


def test_get_rope_index(case, reference, family, index):
    family_prompts, outputs = case
    prompt, theirs = family_prompts[index], outputs["results"][family][index]
    where = f"{reference} {outputs['sources'][family]}, prompt {prompt['layout']}"
    assert "error" not in theirs, f"{where}: the reference failed: {theirs.get('error')}"
    version = REFERENCES[reference][0]
    fields = differing_fields(mrope_outputs(family, convention(version), prompt), theirs, prompt)
    row = reference_differences.difference_for(version, family)
    if row is None:
        assert fields == [], f"{where}: mrope differs in {fields}"
        return
    assert set(fields) <= set(row.fields), f"{where}: {fields} beyond {row.name}'s {row.fields}"
    if row.reproduced_by is not None:
        fixed = differing_fields(
            mrope_outputs(family, convention(version), prompt, row.reproduced_by), theirs,
            prompt)
        assert fixed == [], f"{where}: {row.name}'s {row.reproduced_by} differs in {fixed}"


def test_known_difference_is_shown(case, reference, family, request):
    """A row that no prompt shows is stale (or the prompts miss what it is about); with 100
    prompts or more, each of its fields must show."""
    version = REFERENCES[reference][0]
    row = reference_differences.difference_for(version, family)
    family_prompts, outputs = case
    shown = set()
    for prompt, theirs in zip(family_prompts, outputs["results"][family]):
        shown.update(differing_fields(mrope_outputs(family, convention(version), prompt),
                                      theirs, prompt))
    assert shown, f"{row.name}: no prompt shows it"
    if request.config.getoption("cases") >= 100:
        assert shown == set(row.fields), f"{row.name}: prompts show {sorted(shown)}"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__] + sys.argv[1:]))
