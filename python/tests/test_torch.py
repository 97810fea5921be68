"""With torch installed (the pinned test environment's, python/requirements-test.txt): mrope replaces an HF-style module's
get_rope_index and gives HF's tensors, dtypes included. Skipped without torch."""
import numpy as np
import pytest

import golden

torch = pytest.importorskip("torch")

CASES = golden.load_cases()


class HfStyleModel:
    """The part of Qwen2VLModel.forward (and its siblings) that computes position ids."""

    def get_rope_index(self, *args, **kwargs):
        raise NotImplementedError("patched with mrope below")

    def position_ids(self, input_ids, image_grid_thw, video_grid_thw, attention_mask,
                     **media):
        # As Qwen2_5_VLModel.forward calls it, by keyword (positional orders: test_api.py).
        return self.get_rope_index(input_ids, image_grid_thw=image_grid_thw,
                                   video_grid_thw=video_grid_thw, attention_mask=attention_mask,
                                   **media)


def as_tensor(value, dtype):
    return None if value is None else torch.tensor(value, dtype=dtype)


HF_CASES = [(i, c) for i, c in CASES if golden.model_for(c).convention != "vllm"]


@pytest.mark.parametrize("case", [c for _, c in HF_CASES], ids=[i for i, _ in HF_CASES])
def test_patched_get_rope_index_gives_hf_tensors(case, monkeypatch):
    model = golden.model_for(case)
    monkeypatch.setattr(HfStyleModel, "get_rope_index",
                        lambda self, *args, **kwargs: model.get_rope_index(*args, **kwargs))
    inputs, outputs = case["inputs"], case["outputs"]
    media = golden.media_kwargs(case)
    del media["attention_mask"]
    for seconds in ("second_per_grid_ts", "video_second_per_grid"):
        if seconds in media:
            media[seconds] = as_tensor(media[seconds], torch.float32)  # as processors give it
    if "audio_feature_lengths" in media:  # HF's name and type
        media["audio_seqlens"] = as_tensor(media.pop("audio_feature_lengths"), torch.int64)
    if "mm_token_type_ids" in media:
        media["mm_token_type_ids"] = as_tensor(media["mm_token_type_ids"], torch.int64)

    position_ids, deltas = HfStyleModel().position_ids(
        as_tensor(inputs["input_ids"], torch.int64),
        as_tensor(inputs.get("image_grid_thw"), torch.int64),
        as_tensor(inputs.get("video_grid_thw"), torch.int64),
        as_tensor(inputs["attention_mask"], torch.int64), **media)

    dtype = torch.float32 if golden.position_dtype(case) == np.float32 else torch.int64
    assert isinstance(position_ids, torch.Tensor) and isinstance(deltas, torch.Tensor)
    assert torch.equal(position_ids,
                       torch.tensor(golden.rope_index_positions(case), dtype=dtype))
    assert torch.equal(deltas,
                       torch.tensor(outputs["mrope_position_deltas"], dtype=dtype).unsqueeze(1))
