"""Model.from_config(preset, overrides): every override takes effect (a rope override gives the
cos/sin of a config.json saying the same) or raises ValueError naming the key (unknown, invalid,
or without effect on the resulting model)."""
import json

import numpy as np
import pytest

import mrope

VISION_START, VISION_END, IMAGE = 151652, 151653, 151655
# T3 I1x8x8 T2: an image spans all three axes, so the sections matter.
PROMPT = [[11, 12, 13, VISION_START] + [IMAGE] * 16 + [VISION_END, 14, 15]]
GRID = [[1, 8, 8]]


def qwen2_5_vl_config(rope):
    """Qwen2.5-VL-7B-Instruct's config.json with the text rope keys `rope`."""
    return dict({"model_type": "qwen2_5_vl", "image_token_id": IMAGE, "video_token_id": 151656,
                 "vision_start_token_id": VISION_START, "vision_end_token_id": VISION_END,
                 "vision_config": {"spatial_merge_size": 2, "tokens_per_second": 2}}, **rope)


def cos_sin(model):
    return model.plan(PROMPT, GRID).cos_sin()


def mrope_scaling(sections, **rest):
    return {"rope_scaling": dict({"type": "mrope", "mrope_section": sections}, **rest)}


@pytest.mark.parametrize("overrides, rope", [
    ({"rope_theta": 10000},
     dict({"rope_theta": 10000, "head_dim": 128}, **mrope_scaling([16, 24, 24]))),
    ({"mrope_section": [8, 28, 28]},
     dict({"rope_theta": 1e6, "head_dim": 128}, **mrope_scaling([8, 28, 28]))),
    ({"partial_rotary_factor": 0.5, "mrope_section": [8, 12, 12]},
     dict({"rope_theta": 1e6, "head_dim": 128, "partial_rotary_factor": 0.5},
          **mrope_scaling([8, 12, 12]))),
    ({"head_dim": 64, "mrope_section": [8, 12, 12]},
     dict({"rope_theta": 1e6, "head_dim": 64}, **mrope_scaling([8, 12, 12]))),
    ({"max_position_embeddings": 32768, "rope_scaling": {"rope_type": "yarn", "factor": 4}},
     {"rope_theta": 1e6, "head_dim": 128, "max_position_embeddings": 32768,
      "rope_scaling": {"rope_type": "yarn", "factor": 4, "mrope_section": [16, 24, 24]}}),
], ids=["rope_theta", "mrope_section", "partial_rotary_factor", "head_dim", "rope_scaling"])
def test_rope_override_gives_the_cos_sin_of_the_same_config_json(tmp_path, overrides, rope):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(qwen2_5_vl_config(rope)))
    got = cos_sin(mrope.Model.from_config("qwen2_5_vl", overrides))
    want = cos_sin(mrope.Model.from_config(path))
    preset = cos_sin(mrope.Model.from_config("qwen2_5_vl"))
    assert got[0].shape == want[0].shape
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert got[0].shape != preset[0].shape or not np.array_equal(got[0], preset[0])


@pytest.mark.parametrize("overrides, message", [
    ({"bogus_key": 1}, "unknown key 'bogus_key' for preset qwen2_5_vl; its keys are "
                       "image_token_id, video_token_id, vision_start_token_id"),
    ({"bogus_key": 1}, "tokens_per_second, video_time_rounding, rope_theta"),
    ({"checkpoint": "Qwen/Qwen2.5-VL-7B-Instruct"}, "unknown key 'checkpoint'"),
    ([1, 2], "expected a JSON object"),
    ({"rope_theta": -1}, "rope_theta must be a finite number > 1"),
    ({"rope_theta": "big"}, "rope_theta"),
    ({"rope_theta": None}, "overrides.rope_theta: expected a value, got null"),
    ({"spatial_merge_size": 2.5}, "overrides.spatial_merge_size"),
    ({"mrope_section": [16, 24, 25]}, "mrope_section [16, 24, 25] sums to 65"),
    ({"rope_scaling": {"rope_type": "linear"}}, "rope_scaling.factor is required"),
    # Read by the scaled rope types only: the preset's default one would ignore it.
    ({"max_position_embeddings": 128000},
     "overrides.max_position_embeddings: has no effect on qwen2_5_vl"),
    ({"max_position_embeddings": 128000}, "its keys are image_token_id, video_token_id"),
])
def test_bad_overrides_raise_value_error_naming_the_key(overrides, message):
    with pytest.raises(ValueError) as error:
        mrope.Model.from_config("qwen2_5_vl", overrides)
    assert message in str(error.value)
