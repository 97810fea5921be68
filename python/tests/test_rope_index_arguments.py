"""Model.get_rope_index takes positional arguments in the order of the family's reference
under the model's convention (the family row's rope_index, mrope/model/model_family.cc): for
every preset, the order equals the reference's `def get_rope_index(self, input_ids, ...)`, and
positional calls in that order give the golden cases' positions."""
import json
import os

import numpy as np
import pytest

import mrope
from golden import GOLDEN_DIR, model_for, rope_index_positions

GRIDS = ("image_grid_thw", "video_grid_thw")
GRIDS_MASK = GRIDS + ("attention_mask",)
QWEN2_5_VL = GRIDS + ("second_per_grid_ts", "attention_mask")
OMNI = GRIDS_MASK + ("use_audio_in_video", "audio_seqlens", "second_per_grids")


def types_first(order):
    return ("mm_token_type_ids",) + order


# The parameters after input_ids of get_rope_index in transformers'
# src/transformers/models/<model_type>/modeling_<model_type>.py (Qwen3-Omni:
# qwen3_omni_moe/modeling_qwen3_omni_moe.py), read from each release's wheel.
V4_57_6 = {
    "qwen2_vl": GRIDS_MASK, "qwen2_5_vl": QWEN2_5_VL, "qwen3_vl": GRIDS_MASK,
    "qwen2_5_omni": OMNI, "qwen3_omni": OMNI, "glm4v": GRIDS_MASK, "glm4v_moe": GRIDS_MASK,
}
V5_2_0 = dict(V4_57_6, **{
    "qwen3_5": GRIDS_MASK, "qwen3_5_moe": GRIDS_MASK, "glm46v": GRIDS_MASK,
    "glm_ocr": GRIDS_MASK, "paddleocr_vl": GRIDS_MASK,
    "ernie4_5_vl_moe": GRIDS_MASK + ("mm_token_type_ids",),
    "glm_image": ("image_grid_thw", "images_per_sample", "attention_mask"),
})
V5_15_0 = {
    "qwen2_vl": types_first(GRIDS_MASK), "qwen2_5_vl": types_first(QWEN2_5_VL),
    "qwen3_vl": types_first(GRIDS_MASK),
    # 5.23.0, their first release.
    "qwen4_exp": types_first(GRIDS_MASK), "cosmos3_omni": types_first(GRIDS_MASK),
    "cosmos3_edge": types_first(GRIDS_MASK), "cohere_compass": types_first(GRIDS_MASK),
    "hunyuan_vl": ("mm_token_type_ids", "image_grid_thw", "attention_mask"),  # images only
    # The Omni thinkers' hf_v5 (5.16.0's generate()) keeps v4.57.6's get_rope_index.
    "qwen2_5_omni": OMNI, "qwen3_omni": OMNI,
}
# transformers 5.23.0, for the families whose hf_v5 (5.3+) convention it verifies.
V5_23_0 = dict(V5_15_0, **{
    family: types_first(GRIDS_MASK)
    for family in ("glm4v", "qwen3_5", "qwen3_5_moe", "glm46v", "paddleocr_vl",
                   "ernie4_5_vl_moe")})
# The vLLM convention keeps the checkpoints' HF (v4) order: vLLM has no get_rope_index.
REFERENCE = {"hf_v4": V4_57_6, "hf_v5_2": V5_2_0, "hf_v5": V5_23_0, "hf_v5_18": V5_23_0,
             "vllm": dict(V4_57_6, cosmos3_omni=GRIDS_MASK, cosmos3_edge=GRIDS_MASK,
                          # no get_rope_index in any reference: Row()'s grids and mask
                          openpangu_vl=GRIDS_MASK, isaac=GRIDS_MASK, keye=GRIDS_MASK,
                          cohere_compass=GRIDS_MASK)}


@pytest.mark.parametrize("preset", mrope.presets())
def test_positional_order_is_the_references(preset):
    model = mrope.Model.from_config(preset)
    assert model._positional == REFERENCE[model.convention][model.family]


def golden(model, case):
    with open(os.path.join(GOLDEN_DIR, model, case)) as f:
        return json.load(f)


def test_ernie_takes_attention_mask_then_mm_token_type_ids():
    case = golden("ernie4_5_vl_moe", "case_019.json")  # image, video, left padding
    inputs = case["inputs"]
    model = model_for(case)
    positions, _ = model.get_rope_index(inputs["input_ids"], inputs["image_grid_thw"],
                                        inputs["video_grid_thw"], inputs["attention_mask"],
                                        inputs["mm_token_type_ids"])
    np.testing.assert_array_equal(positions, rope_index_positions(case))


def test_glm_image_takes_images_per_sample_second():
    case = golden("glm_image", "case_009.json")
    inputs = case["inputs"]
    model = model_for(case)
    positions, _ = model.get_rope_index(inputs["input_ids"], inputs["image_grid_thw"],
                                        inputs["images_per_sample"], inputs["attention_mask"])
    np.testing.assert_array_equal(positions, rope_index_positions(case))
