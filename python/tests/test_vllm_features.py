"""vLLM's current call, get_mrope_input_positions(input_tokens, mm_features), and EVS-pruned
videos, on the golden *_vllm_mm_features and *_vllm_evs cases (tests/golden/README.md,
"Conventions of late 2026"); the two fixes from differential testing."""
import glob
import json
import os
import types

import numpy as np
import pytest

import golden
import mrope


def load(kind):
    cases = []
    for path in sorted(glob.glob(os.path.join(golden.GOLDEN_DIR, "*", "case_*.json"))):
        with open(path) as f:
            case = json.load(f)
        if case.get("kind") == kind:
            cases.append((f"{case['model']}/{case['case']}", case))
    return cases


FEATURE_CASES = load("vllm_request")
EVS_CASES = load("vllm_evs_request")


def as_vllm_objects(features):
    """The golden features as vLLM's objects: attributes, field elements holding tensors in
    .data, float32 seconds as the processor gives them."""
    out = []
    for f in features:
        data = {}
        for key, value in f["data"].items():
            dtype = np.float32 if key == "second_per_grid_ts" else np.int64
            data[key] = types.SimpleNamespace(data=np.array(value, dtype=dtype))
        out.append(types.SimpleNamespace(
            modality=f["modality"], identifier=f["identifier"], data=data,
            mm_position=types.SimpleNamespace(**f["mm_position"])))
    return out


def not_at_own_placeholder(case):
    return "items_not_at_own_placeholder" in case["tags"]


def test_cases_found():
    assert len(FEATURE_CASES) == 48 and len(EVS_CASES) == 46


@pytest.mark.parametrize("case", [c for _, c in FEATURE_CASES], ids=[i for i, _ in FEATURE_CASES])
def test_mm_features(case):
    model = golden.model_for(case)
    inputs, outputs = case["inputs"], case["outputs"]
    tokens = inputs["input_tokens"]
    features = as_vllm_objects(inputs["mm_features"])
    positions, delta = model.get_mrope_input_positions(tokens, features)
    np.testing.assert_array_equal(positions, np.array(outputs["positions"]))
    assert delta == outputs["mrope_position_delta"]
    n = len(tokens)
    steps, _ = model.get_mrope_input_positions(tokens, features, context_len=n, seq_len=n + 3)
    np.testing.assert_array_equal(steps, np.array(outputs["decode_positions"]))


@pytest.mark.parametrize("case", [c for _, c in EVS_CASES], ids=[i for i, _ in EVS_CASES])
def test_evs(case):
    model = golden.model_for(case)
    inputs, outputs = case["inputs"], case["outputs"]
    plan = model.plan_vllm(inputs["input_tokens"], as_vllm_objects(inputs["mm_features"]),
                           keep_masks=inputs["keep_masks"], embed_dtype=inputs["embed_dtype"],
                           video_pruning_rate=inputs["video_pruning_rate"])
    defects = [d for d in plan.vllm_defects if not d[3]]
    assert bool(defects) == not_at_own_placeholder(case)
    if not_at_own_placeholder(case):
        return
    n = len(inputs["input_tokens"])
    np.testing.assert_array_equal(plan.positions(0, n)[:, 0, :], np.array(outputs["positions"]))
    assert plan.rope_deltas.item() == outputs["mrope_position_delta"]
    np.testing.assert_array_equal(plan.decode_positions(3)[:, 0, :],
                                  np.array(outputs["decode_positions"]))


def test_plain_dicts_and_grid_form_still_work():
    _, case = FEATURE_CASES[3]
    model = golden.model_for(case)
    tokens = case["inputs"]["input_tokens"]
    from_dicts, _ = model.get_mrope_input_positions(tokens, case["inputs"]["mm_features"])
    np.testing.assert_array_equal(from_dicts, np.array(case["outputs"]["positions"]))
    text, delta = model.get_mrope_input_positions([5, 6, 7])  # the older form, no media
    np.testing.assert_array_equal(text, np.tile(np.arange(3), (3, 1)))
    assert delta == 0


def test_bad_features_raise_value_error():
    _, case = FEATURE_CASES[3]
    model = golden.model_for(case)
    feature = dict(case["inputs"]["mm_features"][0])
    with pytest.raises(ValueError, match="expected modality, mm_position and data"):
        model.get_mrope_input_positions(case["inputs"]["input_tokens"], [{"modality": "image"}])
    feature["modality"] = "audio"
    feature["data"] = {"audio_grid_thw": [1, 2, 2]}
    with pytest.raises(ValueError, match="modality must be 'image' or 'video', got 'audio'"):
        model.get_mrope_input_positions(case["inputs"]["input_tokens"], [feature])


# Differential-testing fix 1 (issue 27): Qwen2.5-VL truncates second_per_grid_ts in the dtype it
# was given, as HF does.
@pytest.mark.parametrize("seconds, t, delta", [
    (np.array([0.99999999], dtype=np.float64), [0, 1, 1, 2], -1),
    ([0.99999999], [0, 1, 1, 2], -1),
    (np.array([0.99999999], dtype=np.float32), [0, 1, 3, 4], 1),
])
def test_seconds_truncated_in_given_dtype(seconds, t, delta):
    model = mrope.Model.from_config("qwen2_5_vl_hf")
    positions, deltas = model.get_rope_index(
        np.array([[151652, 151656, 151656, 151653]]), video_grid_thw=[[2, 2, 2]],
        second_per_grid_ts=seconds, attention_mask=np.ones((1, 4), dtype=np.int64))
    assert positions[0, 0].tolist() == t
    assert deltas.item() == delta


# Differential-testing fix 2: an audio of 1-2 mel frames (0 tokens) is refused alone as in a
# video, naming row, token and lengths.
def test_audio_of_no_tokens_refused():
    model = mrope.Model.from_config("qwen2_5_omni")
    with pytest.raises(ValueError, match=r"row 0, token 1: audio_feature_lengths\[0\] = 2 mel "
                                         "frames make 0 audio tokens"):
        model.get_rope_index(np.array([[100, 151647, 151648, 100]]), audio_feature_lengths=[2])


def test_compare_conventions():
    case = next(c for i, c in golden.load_cases() if i == "qwen2_5_vl/case_026")
    model = golden.model_for(case)
    inputs = case["inputs"]
    agree, report = model.compare(inputs["input_ids"], inputs.get("image_grid_thw"),
                                  inputs.get("video_grid_thw"),
                                  **golden.media_kwargs(case), conventions=("hf_v4", "vllm"))
    assert not agree
    assert "hf_v4: delta 45" in report and "vllm: delta 60" in report
    agree, report = model.compare([[5, 6, 7]], conventions=("hf_v4", "hf_v5_2", "vllm"))
    assert agree and report.endswith("conventions agree\n")
    with pytest.raises(ValueError, match="at least two conventions"):
        model.compare([[5, 6, 7]], conventions=("vllm",))
