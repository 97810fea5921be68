"""Plan.cos_sin(layout="hf", transformers="5.2.0") against the transformers v5.2.0 rotary cases
(tests/golden/rotary_*_v5): each case's window of positions comes from a position case of the
same folder set, which is planned here; the cos/sin HF's rotary module returned for it must come
back in its layout ([B, T, width], each column on its frequency's axis), within 2 ulp."""
import glob
import json
import os

import numpy as np
import pytest

import golden
import mrope


def _rotary_windows():
    """(id, rotary case, batch row, position case, source row) for every window taken from a
    prefill's position_ids without an offset."""
    windows = []
    for path in sorted(glob.glob(os.path.join(golden.GOLDEN_DIR, "rotary_*_v5", "case_*.json"))):
        with open(path) as f:
            case = json.load(f)
        source = case["positions_from"]
        if source["offset"] != 0:
            continue
        for b, row in enumerate(source["rows"]):
            if row["field"] != "position_ids":
                continue
            with open(os.path.join(golden.GOLDEN_DIR, row["case"] + ".json")) as f:
                positions_case = json.load(f)
            windows.append((f"{case['model']}/{case['case']}/row{b}", case, b, positions_case,
                            row))
    return windows


WINDOWS = _rotary_windows()


def test_windows_found():
    families = {case["reference_model"] for _, case, _, _, _ in WINDOWS}
    assert {"glm46v", "glm_ocr", "glm_image", "ernie4_5_vl_moe", "qwen3_5"} <= families


def _ulp_distance(a, b):
    """Distance in float32 values (the arrays' signs agree or both are near zero)."""
    def ordered(x):
        bits = np.asarray(x, np.float32).view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)
    return np.abs(ordered(a) - ordered(b))


@pytest.mark.parametrize("given", [w[1:] for w in WINDOWS], ids=[w[0] for w in WINDOWS])
def test_hf_layout_is_the_reference_modules(given):
    case, b, positions_case, row = given
    inputs = positions_case["inputs"]
    plan = golden.model_for(positions_case).plan(
        inputs["input_ids"], image_grid_thw=inputs.get("image_grid_thw"),
        video_grid_thw=inputs.get("video_grid_thw"), **golden.media_kwargs(positions_case))
    # start is a column of the padded batch, as positions() and cos_sin() give it.
    r, window = row["row"], slice(row["start"], row["start"] + row["length"])
    np.testing.assert_array_equal(plan.positions()[:, r, window],
                                  np.array(case["inputs"]["position_ids"])[:, b])

    cos, sin = plan.cos_sin(layout="hf", transformers=case["source"]["transformers_version"])
    want_cos = np.array(case["outputs"]["cos"], np.float32)[b]
    want_sin = np.array(case["outputs"]["sin"], np.float32)[b]
    assert cos[r, window].shape == want_cos.shape and cos.dtype == np.float32
    assert _ulp_distance(cos[r, window], want_cos).max() <= 2
    assert _ulp_distance(sin[r, window], want_sin).max() <= 2

    # The same numbers as the per-pair layout, each in the columns its layout gives it.
    pairs_cos, _ = plan.cos_sin()
    half = pairs_cos.shape[-1]
    columns = np.arange(2 * half)
    pair_of_column = (columns // 2 if case["config"]["cos_layout"] == "repeat_interleave"
                      else columns % half)
    np.testing.assert_array_equal(cos, pairs_cos[..., pair_of_column])


def test_layout_is_checked():
    plan = mrope.Model.from_config("glm46v").plan([[1, 2, 3]])
    with pytest.raises(ValueError, match="layout must be 'pairs' or 'hf'"):
        plan.cos_sin(layout="torch")


def test_release_is_checked():
    plan = mrope.Model.from_config("glm46v").plan([[1, 2, 3]])
    with pytest.raises(ValueError, match="expected a release such as '5.23.0', got 'latest'"):
        plan.cos_sin(layout="hf", transformers="latest")
    with pytest.raises(ValueError, match="layout 'pairs' has none"):
        plan.cos_sin(transformers="5.23.0")


def test_per_axis_families_give_every_axis_before_5_17():
    plan = mrope.Model.from_config("qwen2_vl").plan([[11, 12, 13]])
    pairs_cos, _ = plan.cos_sin()
    for release in ("4.57.6", "5.16.0"):
        cos, _ = plan.cos_sin(layout="hf", transformers=release)
        assert cos.shape == (3, 1, 3, 128)
        for axis in range(3):  # text: every axis at the same position
            np.testing.assert_array_equal(cos[axis], np.concatenate([pairs_cos, pairs_cos], -1))
    cos, _ = plan.cos_sin(layout="hf", transformers="5.17.0")  # PR #48105: sections applied
    np.testing.assert_array_equal(cos, np.concatenate([pairs_cos, pairs_cos], -1))


@pytest.mark.parametrize("family,before,since", [("glm4v", "cat", "repeat_interleave"),
                                                 ("glm4v_moe", "cat", "cat"),
                                                 ("ernie4_5_vl_moe", "repeat_interleave",
                                                  "repeat_interleave")])
def test_layout_follows_the_release(family, before, since):
    plan = mrope.Model.from_config(family).plan([[11, 12, 13]])
    pairs_cos, _ = plan.cos_sin()
    half = pairs_cos.shape[-1]
    columns = {"cat": np.arange(2 * half) % half, "repeat_interleave": np.arange(2 * half) // 2}
    for release, layout in (("5.16.0", before), ("5.17.0", since), ("6.0", since)):
        cos, _ = plan.cos_sin(layout="hf", transformers=release)
        np.testing.assert_array_equal(cos, pairs_cos[..., columns[layout]], err_msg=release)
