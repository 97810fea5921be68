"""Every golden position case through the Python API, bit-exact in values, dtypes and shapes.

These run as a program that never imported torch does: numpy and lists go to the extension
unconverted (with torch loaded they take the conversion path, which test_threads.py and
test_torch.py run over every case)."""
import sys

import numpy as np
import pytest

import golden

CASES = golden.load_cases()


@pytest.fixture(autouse=True)
def without_torch(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)


def test_cases_found():
    assert len(CASES) >= 300, golden.GOLDEN_DIR


@pytest.mark.parametrize("case", [c for _, c in CASES], ids=[i for i, _ in CASES])
def test_get_rope_index(case):
    model = golden.model_for(case)
    inputs, outputs = case["inputs"], case["outputs"]
    dtype = golden.position_dtype(case)
    batch, length = case["batch_size"], case["seq_len"]

    positions, deltas = model.get_rope_index(
        np.array(inputs["input_ids"], dtype=np.int64), image_grid_thw=inputs.get("image_grid_thw"),
        video_grid_thw=inputs.get("video_grid_thw"), **golden.media_kwargs(case))

    assert positions.dtype == dtype and deltas.dtype == dtype
    assert positions.shape == (3, batch, length) and deltas.shape == (batch, 1)
    np.testing.assert_array_equal(positions,
                                  np.array(golden.rope_index_positions(case), dtype=dtype))
    np.testing.assert_array_equal(
        deltas, np.array(outputs["mrope_position_deltas"], dtype=dtype).reshape(batch, 1))


@pytest.mark.parametrize("case", [c for _, c in CASES], ids=[i for i, _ in CASES])
def test_plan_decode_positions(case):
    model = golden.model_for(case)
    inputs = case["inputs"]
    dtype = golden.position_dtype(case)
    outputs = case["outputs"]
    plan = model.plan(inputs["input_ids"], image_grid_thw=inputs.get("image_grid_thw"),
                      video_grid_thw=inputs.get("video_grid_thw"), **golden.media_kwargs(case))
    np.testing.assert_array_equal(
        plan.rope_deltas.ravel(), np.array(outputs[golden.stored_deltas_key(case)], dtype=dtype))
    if "decode_position_ids" not in outputs:  # the *_hf_v5 folders
        return
    decode = plan.decode_positions(3)
    assert decode.dtype == dtype
    np.testing.assert_array_equal(decode, np.array(outputs["decode_position_ids"], dtype=dtype))
    if "decode_position_table" in outputs:  # GLM-Image: every step, rows padded to the longest
        table = np.array(outputs["decode_position_table"], dtype=dtype)
        np.testing.assert_array_equal(plan.decode_positions(table.shape[2]), table)
