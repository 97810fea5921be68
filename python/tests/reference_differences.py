"""Every difference between mrope and an installed reference that the differential tests
(test_reference_transformers.py) accept: one row each (a row's family may be a tuple of the
families that run one reference function). A (reference, family) pair without a row must
agree bit for bit on every prompt; with a row, mrope's preset may differ only in the row's
fields, and at least one prompt must show the difference (a fixed reference retires it).
Where `reproduced_by` names preset overrides, mrope with them must agree bit for bit.

Fields mrope and a reference can differ in (test_reference_transformers.FIELDS):
positions (on real tokens), padding (positions in padding slots), deltas, dtypes, decode.
"""
import collections

Difference = collections.namedtuple(
    "Difference",
    "name references family fields reproduced_by reference_line what test")

DIFFERENCES = (
    Difference(
        name="qwen2_5_vl_video_time_scale_then_truncate",
        # Found by running the releases on the same prompts: 5.15.0, 5.16.1 and 5.17.0 give
        # qwen2_5_vl_hf_v5's values, 5.18.0 to 5.23.0 these.
        references=">=5.18.0",
        family="qwen2_5_vl",
        fields=("positions", "deltas"),  # decode resumes from text, placed as in 5.15
        reproduced_by={"video_time_rounding": "scale_then_truncate"},
        reference_line="transformers/models/qwen2_5_vl/modeling_qwen2_5_vl.py, "
                       "Qwen2_5_VLModel.get_rope_index: `time_interval = tokens_per_second * "
                       "next(second_per_grid_ts)`, then get_vision_position_ids: "
                       "`(torch.arange(llm_grid_t) * time_interval).long()`",
        what="transformers PR #48669: a video's time positions are (k * tokens_per_second * "
             "second_per_grid).long() in float32, no longer k * int(tokens_per_second * "
             "second_per_grid): videos sampled above 2 fps (fractional seconds per grid) get "
             "other time positions. mrope's qwen2_5_vl_hf_v5 preset keeps v5.15's truncation; "
             "video_time_rounding=scale_then_truncate (vLLM's rounding) gives 5.23's values.",
        test="test_reference_transformers.py::test_get_rope_index"
             "[transformers==5.23.0-qwen2_5_vl-*]"),
    Difference(
        name="glm4v_no_hf_v5_convention",
        # Run: 5.3.0 and 5.15.0 to 5.23.0 all give these values; 5.2.0 is glm4v_hf_v5_2's own.
        references=">=5.3.0",
        family="glm4v",
        fields=("padding", "deltas", "decode"),
        reproduced_by=None,
        reference_line="transformers/models/glm4v/modeling_glm4v.py, Glm4vModel.get_rope_index: "
                       "`position_ids = torch.zeros(...)`, `llm_positions.max() + 1 - "
                       "len(current_input_ids)` (the unpadded row); "
                       "transformers/generation/utils.py, _update_model_kwargs_for_generation: "
                       "`position_ids[..., -1:] + 1`",
        what="mrope has no hf_v5 convention for GLM-4.1V (no glm4v_hf_v5 preset; "
             "mm_token_type_ids blocks are refused for its bracketed videos), so the nearest, "
             "glm4v_hf_v5_2, is compared: the same positions on every real token, but padding "
             "slots 1 (5.23: 0), the delta max + 1 - L of the padded row (5.23: max + 1 - n) and "
             "decode L + k + delta (5.23: each axis from its own last value + 1 + k) in padded "
             "rows.",
        test="test_reference_transformers.py::test_get_rope_index"
             "[transformers==5.23.0-glm4v-*]"),
    Difference(
        name="qwen3_5_no_hf_v5_convention",
        # Run: 5.2.0 agrees on every prompt; 5.3.0 and 5.23.0 give these deltas (5.3.0's
        # Qwen3.5 also raises StopIteration on most video prompts).
        references=">=5.3.0",
        # Qwen3_5MoeModel.get_rope_index is Qwen3.5's, character for character (5.23.0).
        family=("qwen3_5", "qwen3_5_moe"),
        fields=("deltas",),
        reproduced_by=None,
        reference_line="transformers/models/qwen3_5/modeling_qwen3_5.py, "
                       "Qwen3_5Model.get_rope_index (qwen3_5_moe/modeling_qwen3_5_moe.py, "
                       "Qwen3_5MoeModel.get_rope_index, the same): `llm_positions.max() + 1 - "
                       "len(current_input_ids)` (the unpadded row)",
        what="mrope's one Qwen3.5 preset, qwen3_5 (hf_v5_2; qwen3_5_moe the same), gives a padded row the delta "
             "max + 1 - L of the padded row; 5.23 gives max + 1 - n. Positions, padding slots "
             "(0) and decode agree, mm_token_type_ids given as 5.23's processor returns them "
             "(the outer <vision_start> ... <vision_end> it keeps around a video's frames is "
             "refused by the token scan without them). Smallest: right T1 I1x2x2 | T2 I1x2x2: "
             "row 0's delta -1 (5.23: 0).",
        test="test_reference_transformers.py::test_get_rope_index"
             "[transformers==5.23.0-qwen3_5-*], [transformers==5.23.0-qwen3_5_moe-*]"),
    Difference(
        name="glm46v_no_hf_v5_convention",
        # Run: 5.2.0 agrees on every prompt; 5.3.0 and 5.23.0 give these values.
        references=">=5.3.0",
        family="glm46v",
        fields=("padding", "deltas", "decode"),
        reproduced_by=None,
        reference_line="transformers/models/glm46v/modeling_glm46v.py, "
                       "Glm46VModel.get_rope_index (GLM-4.1V's, line for line): "
                       "`position_ids = torch.zeros(...)`, `llm_positions.max() + 1 - "
                       "len(current_input_ids)`; transformers/generation/utils.py, "
                       "_update_model_kwargs_for_generation: `position_ids[..., -1:] + 1`",
        what="As glm4v_no_hf_v5_convention: mrope's one GLM-4.6V preset, glm46v (hf_v5_2), "
             "gives padding slots 1 (5.23: 0), the delta max + 1 - L (5.23: max + 1 - n) and "
             "decode from the padded row's values; positions on real tokens agree. Smallest: "
             "right T1 | T1 I1x2x2: row 0's padding 1 (5.23: 0), delta -3 (5.23: 0), decode "
             "2, 3, 4 (5.23: 1, 2, 3).",
        test="test_reference_transformers.py::test_get_rope_index"
             "[transformers==5.23.0-glm46v-*]"),
    Difference(
        name="paddleocr_vl_no_hf_v5_convention",
        # Run: 5.2.0 agrees on every prompt; 5.3.0 and 5.23.0 give these deltas.
        references=">=5.3.0",
        family="paddleocr_vl",
        fields=("deltas",),
        reproduced_by=None,
        reference_line="transformers/models/paddleocr_vl/modeling_paddleocr_vl.py, "
                       "PaddleOCRVLModel.get_rope_index (Qwen2-VL's, line for line): "
                       "`llm_positions.max() + 1 - len(current_input_ids)`, not clamped",
        what="mrope's one PaddleOCR-VL preset, paddleocr_vl (hf_v5_2), clamps the delta at 0 "
             "(v5.2's rule) and takes it from the padded row; 5.23 gives max + 1 - n, negative "
             "too (qwen2_vl_hf_v5's rule). Positions, padding and decode agree. Smallest: "
             "T1 I1x4x4 (one row, no padding): delta 0 (5.23: -2).",
        test="test_reference_transformers.py::test_get_rope_index"
             "[transformers==5.23.0-paddleocr_vl-*]"),
    Difference(
        name="ernie4_5_vl_moe_no_hf_v5_convention",
        # Run: 5.2.0 agrees on every prompt (positions, padding, deltas; its generate() step
        # was not run); 5.3.0 differs in positions on more prompts than 5.23.0 (a later
        # change in between, not bisected).
        references=">=5.3.0",
        family="ernie4_5_vl_moe",
        fields=("positions", "padding", "deltas", "decode"),
        reproduced_by=None,
        reference_line="transformers/models/ernie4_5_vl_moe/modeling_ernie4_5_vl_moe.py, "
                       "Ernie4_5_VLMoeModel.get_rope_index: `current_pos += max(grid_thw[1], "
                       "grid_thw[2]) // spatial_merge_size`, `position_ids = torch.zeros(...)`, "
                       "`llm_positions.max() + 1 - len(current_input_ids)`; "
                       "transformers/generation/utils.py, _update_model_kwargs_for_generation",
        what="mrope's one ERNIE-4.5-VL preset, ernie4_5_vl_moe (hf_v5_2, v5.2.0's values), "
             "resumes text after a block at its max + 1; 5.23 at start + max(h, w) / merge "
             "(hf_v5's cursor rule), so text after a video whose time reaches further goes "
             "back. Also padding slots 1 (5.23: 0), the delta max + 1 - L (5.23: max + 1 - n), "
             "decode from the padded row's values. Smallest: V4x2x2 (one row, no padding): "
             "<video_end> at 3 (5.23: 2), delta 0 (5.23: -1); right T1 | T1 I1x2x2: row 0's "
             "padding 1 (5.23: 0), delta -3 (5.23: 0).",
        test="test_reference_transformers.py::test_get_rope_index"
             "[transformers==5.23.0-ernie4_5_vl_moe-*]"),
)


def _version(text):
    return tuple(int(part) for part in text.split("."))


def difference_for(version, family):
    """The row covering transformers `version` (a tuple) and `family`, or None."""
    rows = [d for d in DIFFERENCES
            if family in ((d.family,) if isinstance(d.family, str) else d.family) and
            version >= _version(d.references.lstrip(">="))]
    assert len(rows) <= 1, rows
    return rows[0] if rows else None
