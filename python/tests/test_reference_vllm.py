"""mrope against the vLLM installed in the test environment (python/requirements-test.txt), run
live: the rows of seeded random prompts (reference_prompts.py, laid out as transformers 5.23's
processors lay them out, which vLLM's processors call) as single requests through vLLM's own
get_mrope_input_positions(input_tokens, mm_features) (reference_runner_vllm.py, in a process of
that vLLM), compared bit for bit with mrope's get_mrope_input_positions(tokens, mm_features):
positions, dtype and delta; and the decode steps vLLM's own get_next_input_positions gives
with that delta against mrope's Plan.decode_positions.

Options (conftest.py): --cases N requests per family, --seed S.
"""
import functools
import sys

import numpy as np
import pytest

import mrope
import reference_env
import reference_prompts

FAMILIES = ("qwen2_5_vl", "qwen3_vl", "cosmos3_omni", "cosmos3_edge", "openpangu_vl", "isaac",
            "keye", "cohere_compass")
# Families whose vLLM code takes images only: a request with a video fails there, and in mrope.
IMAGES_ONLY = ("cohere_compass",)
# vLLM classes whose get_mrope_input_positions is a row's (resolved through their bases) but
# whose config comes from the checkpoint's remote code (no installed file gives their ids or
# rotary): checked against that row's *_vllm preset on its prompts. vLLM's positions read no
# token ids.
ON_A_ROW = {"interns1_pro": "qwen3_vl", "opencua": "qwen2_5_vl", "keye_vl1_5": "qwen3_vl"}
# Families whose blocks are the runs of media tokens: their token scan (the grid form) is checked
# too. (Qwen3-VL's scan does not take transformers 5.23's outer <vision_start> ... <vision_end>
# around a video's timestamped frames: see README, SGLang.)
MEDIA_RUNS = ("openpangu_vl", "isaac", "keye")
REFERENCES = reference_env.pinned("vllm")
PROCESSOR_LAYOUT = (5, 23)  # the transformers whose processors vLLM runs here


def pytest_generate_tests(metafunc):
    if "index" in metafunc.fixturenames:
        params = [(r, f, i) for r in REFERENCES for f in FAMILIES + tuple(ON_A_ROW)
                  for i in range(metafunc.config.getoption("cases"))]
        metafunc.parametrize("reference,family,index", params,
                             ids=[f"{r}-{f}-{i}" for r, f, i in params])
    elif "reference" in metafunc.fixturenames:
        metafunc.parametrize("reference", list(REFERENCES))


@functools.lru_cache(maxsize=None)
def requests(family, cases, seed):
    """(input_tokens, features, layout) of the prompts' rows, unpadded, `cases` of them."""
    found = []
    for prompt in reference_prompts.random_prompts(family, PROCESSOR_LAYOUT, cases, seed):
        for b, features in enumerate(prompt["features"]):
            tokens = prompt["input_ids"][b][prompt["attention_mask"][b].astype(bool)]
            layout = prompt["layout"].split(" ", 1)[1].split(" | ")[b]
            if family != "qwen2_5_vl":  # only Qwen2.5-VL's features carry seconds per grid
                features = [f[:4] + (None,) for f in features]
            found.append(([int(t) for t in tokens], features, layout))
    return found[:cases]


@functools.lru_cache(maxsize=None)
def reference_outputs(reference, cases, seed):
    request = {"families": {
        f: (reference_prompts.FAMILY_CONFIG[row(f)],
            [r[:2] for r in requests(row(f), cases, seed)])
        for f in FAMILIES + tuple(ON_A_ROW)}}
    return reference_env.run("reference_runner_vllm.py", REFERENCES[reference][1], request)


def row(family):
    """The family whose row (prompts, preset) `family` is checked with."""
    return ON_A_ROW.get(family, family)


@functools.lru_cache(maxsize=None)
def model_for(family, reference):
    """The family's preset under the convention mrope's release table gives `reference`."""
    return mrope.Model.from_config(family, convention=reference,
                                   overrides=reference_prompts.FAMILY_CONFIG[family])


def as_feature(modality, offset, length, grid, seconds):
    data = {f"{modality}_grid_thw": list(grid)}
    if seconds is not None:
        data["second_per_grid_ts"] = seconds
    return {"modality": modality, "mm_position": {"offset": offset, "length": length},
            "data": data}


def test_reference_is_the_pinned_release(reference, request):
    outputs = reference_outputs(reference, request.config.getoption("cases"),
                                request.config.getoption("seed"))
    assert "vllm==" + outputs["version"] == reference


def test_get_mrope_input_positions(reference, family, index, request):
    cases, seed = request.config.getoption("cases"), request.config.getoption("seed")
    tokens, features, layout = requests(row(family), cases, seed)[index]
    outputs = reference_outputs(reference, cases, seed)
    theirs = outputs["results"][family][index]
    where = f"{reference} {outputs['sources'][family]}, request {layout}"
    ours = functools.partial(model_for(row(family), reference).get_mrope_input_positions,
                             np.array(tokens, dtype=np.int64), [as_feature(*f) for f in features])
    if family in IMAGES_ONLY and any(f[0] == "video" for f in features):
        assert "Unsupported modality: video" in theirs.get("error", ""), where
        with pytest.raises(ValueError, match="takes images only"):
            ours()
        return
    assert "error" not in theirs, f"{where}: the reference failed: {theirs.get('error')}"
    positions, delta = ours()
    positions = np.asarray(positions)
    assert positions.dtype == theirs["positions"].dtype, where
    np.testing.assert_array_equal(positions, theirs["positions"], err_msg=where)
    assert delta == theirs["delta"], where
    decode = model_for(row(family), reference).plan_vllm(
        np.array(tokens, dtype=np.int64), [as_feature(*f) for f in features]).decode_positions(
            len(theirs["decode"][0]))
    np.testing.assert_array_equal(np.asarray(decode)[:, 0, :], theirs["decode"], err_msg=where)
    if family not in MEDIA_RUNS:
        return
    # The grid form finds the blocks by the token scan (what get_rope_index and the CLI do).
    grids = {m: np.array([f[3] for f in features if f[0] == m], dtype=np.int64).reshape(-1, 3)
             for m in ("image", "video")}
    seconds = [f[4] for f in features if f[0] == "video" and f[4] is not None]
    positions, delta = model_for(row(family), reference).get_mrope_input_positions(
        np.array(tokens, dtype=np.int64), image_grid_thw=grids["image"],
        video_grid_thw=grids["video"],
        second_per_grid_ts=np.array(seconds, dtype=np.float32) if seconds else None)
    np.testing.assert_array_equal(positions, theirs["positions"], err_msg="token scan: " + where)
    assert delta == theirs["delta"], "token scan: " + where


if __name__ == "__main__":
    sys.exit(pytest.main([__file__] + sys.argv[1:]))
