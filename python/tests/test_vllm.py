"""The vLLM-style per-request call on the golden cases of vLLM-convention models."""
import numpy as np
import pytest

import golden

CASES = [(i, c) for i, c in golden.load_cases() if golden.model_for(c).convention == "vllm"]


def split_rows(case):
    """Each row's own tokens and media: (tokens, image grids, video grids, seconds)."""
    inputs, config = case["inputs"], case["config"]
    images = list(inputs.get("image_grid_thw") or [])
    videos = list(inputs.get("video_grid_thw") or [])
    seconds = list(np.array(inputs.get("second_per_grid_ts") or [], dtype=np.float32))
    rows = []
    for ids, mask in zip(inputs["input_ids"], inputs["attention_mask"]):
        tokens = [t for t, m in zip(ids, mask) if m]
        starts = [b for a, b in zip(tokens, tokens[1:]) if a == config["vision_start_token_id"]]
        n_images = starts.count(config["image_token_id"])
        n_videos = starts.count(config["video_token_id"])
        row_seconds = np.array(seconds[:n_videos], dtype=np.float32) if n_videos else None
        rows.append((tokens, images[:n_images], videos[:n_videos], row_seconds))
        del images[:n_images], videos[:n_videos], seconds[:n_videos]
    return rows


def test_cases_found():
    assert len(CASES) >= 60


@pytest.mark.parametrize("case", [c for _, c in CASES], ids=[i for i, _ in CASES])
def test_get_mrope_input_positions(case):
    model = golden.model_for(case)
    outputs = case["outputs"]
    expected = np.array(outputs["position_ids"], dtype=np.int64)
    decode = np.array(outputs["decode_position_ids"], dtype=np.int64)
    for row, (tokens, images, videos, seconds) in enumerate(split_rows(case)):
        n = len(tokens)
        positions, delta = model.get_mrope_input_positions(
            tokens, image_grid_thw=images or None, video_grid_thw=videos or None,
            second_per_grid_ts=seconds)
        assert positions.dtype == np.int64 and positions.shape == (3, n)
        np.testing.assert_array_equal(positions, expected[:, row, case["seq_len"] - n:])
        assert delta == outputs["mrope_position_deltas"][row]
        # Decode steps are the window past the prompt.
        steps, _ = model.get_mrope_input_positions(
            tokens, image_grid_thw=images or None, video_grid_thw=videos or None,
            second_per_grid_ts=seconds, context_len=n, seq_len=n + 3)
        np.testing.assert_array_equal(steps, decode[:, row, :])
