"""The package API: model loading, HF calling conventions, plans, cos/sin and errors."""
import os
import pickle
import shutil

import numpy as np
import pytest

import golden
import mrope

VISION_START, VISION_END, IMAGE, VIDEO = 151652, 151653, 151655, 151656

# T3 I1x4x4 T2: text, an image of 4 merged tokens, text (Qwen token ids).
IMAGE_PROMPT = [[11, 12, 13, VISION_START] + [IMAGE] * 4 + [VISION_END, 14, 15]]
IMAGE_GRID = [[1, 4, 4]]


def test_from_config_reads_hf_config_file_and_checkpoint_dir(tmp_path):
    published = os.path.join(golden.REPO_DIR, "examples", "configs", "Qwen2-VL-7B-Instruct.json")
    shutil.copy(published, tmp_path / "config.json")
    preset = mrope.Model.from_config("qwen2_vl")
    for model in (mrope.Model.from_config(published), mrope.Model.from_config(tmp_path)):
        assert model.family == preset.family == "qwen2_vl"
        for a, b in zip(model.get_rope_index(IMAGE_PROMPT, IMAGE_GRID),
                        preset.get_rope_index(IMAGE_PROMPT, IMAGE_GRID)):
            np.testing.assert_array_equal(a, b)


def test_get_rope_index_values():
    positions, deltas = mrope.Model.from_config("qwen2_vl").get_rope_index(
        np.array(IMAGE_PROMPT), np.array(IMAGE_GRID))
    np.testing.assert_array_equal(positions[:, 0], [[0, 1, 2, 3, 4, 4, 4, 4, 6, 7, 8],
                                                    [0, 1, 2, 3, 4, 4, 5, 5, 6, 7, 8],
                                                    [0, 1, 2, 3, 4, 5, 4, 5, 6, 7, 8]])
    assert deltas.tolist() == [[-2]]


def test_outputs_own_mrope_buffers():
    positions, deltas = mrope.Model.from_config("qwen2_vl").get_rope_index(IMAGE_PROMPT,
                                                                            IMAGE_GRID)
    for array in (positions, deltas):
        assert not array.flags["OWNDATA"] and array.base is not None  # the capsule
        assert array.flags["C_CONTIGUOUS"] and array.flags["WRITEABLE"]


def test_hf_positional_order_follows_the_family():
    ids = np.array([[151643, 11, 12, 13]])
    mask = np.array([[0, 1, 1, 1]])
    expected = [[1, 0, 1, 2]] * 3
    # Qwen2-VL: attention_mask 4th; Qwen2.5-VL: second_per_grid_ts 4th, attention_mask 5th;
    # Omni: attention_mask 4th, use_audio_in_video, audio_seqlens, second_per_grids.
    calls = [("qwen2_vl", (mask,)), ("qwen2_5_vl", (None, mask)),
             ("qwen2_5_omni", (mask, False, None, None))]
    for preset, args in calls:
        positions, _ = mrope.Model.from_config(preset).get_rope_index(ids, None, None, *args)
        np.testing.assert_array_equal(positions[:, 0], expected)


def test_hf_v5_positional_order_puts_token_types_second():
    # transformers >= 5.3: get_rope_index(input_ids, mm_token_type_ids, image_grid_thw,
    # video_grid_thw, [second_per_grid_ts,] attention_mask).
    case = next(c for _, c in golden.load_cases() if c["model"] == "qwen2_5_vl_hf_v5"
                and c["inputs"].get("video_grid_thw"))
    model = golden.model_for(case)
    assert model.convention == "hf_v5"
    inputs = case["inputs"]
    positions, deltas = model.get_rope_index(
        inputs["input_ids"], inputs["mm_token_type_ids"], inputs.get("image_grid_thw"),
        inputs["video_grid_thw"], inputs.get("second_per_grid_ts"), inputs["attention_mask"])
    np.testing.assert_array_equal(positions, case["outputs"]["position_ids"])
    np.testing.assert_array_equal(deltas.ravel(), case["outputs"]["mrope_position_deltas"])
    with pytest.raises(ValueError, match="mm_token_type_ids is required"):
        model.get_rope_index(inputs["input_ids"], image_grid_thw=inputs.get("image_grid_thw"),
                             video_grid_thw=inputs["video_grid_thw"])


def test_token_types_disagreeing_with_the_ids_name_row_and_index():
    model = mrope.Model.from_config("qwen2_vl")
    ids = [[11, 151652, 151655, 151655, 151655, 151655, 151653]]
    types = [[0, 0, 1, 1, 1, 1, 0]]
    positions, _ = model.get_rope_index(ids, [[1, 4, 4]], mm_token_type_ids=types)
    np.testing.assert_array_equal(positions[:, 0], model.get_rope_index(ids, [[1, 4, 4]])[0][:, 0])
    with pytest.raises(ValueError, match="row 0, token 6: mm_token_type_ids is 1 .image. but "
                                         "the token is 151653"):
        model.get_rope_index(ids, [[1, 4, 4]], mm_token_type_ids=[[0, 0, 1, 1, 1, 1, 1]])
    with pytest.raises(ValueError, match="row 0, token 2: token 151655 is an image token but "
                                         "mm_token_type_ids is 0 there"):
        model.get_rope_index(ids, [[1, 4, 4]], mm_token_type_ids=[[0, 0, 0, 1, 1, 1, 0]])


def test_omni_argument_spellings_agree():
    model = mrope.Model.from_config("qwen2_5_omni")
    case = next(c for _, c in golden.load_cases()
                if c["model"] == "qwen2_5_omni" and c["inputs"].get("use_audio_in_video"))
    inputs = case["inputs"]
    grids = (inputs["input_ids"], inputs.get("image_grid_thw"), inputs["video_grid_thw"])
    mask = inputs["attention_mask"]
    ours = model.get_rope_index(
        *grids, attention_mask=mask, use_audio_in_video=True,
        audio_feature_lengths=inputs["audio_feature_lengths"],
        video_second_per_grid=inputs["video_second_per_grid"])
    hf = model.get_rope_index(*grids, mask, True, np.array(inputs["audio_feature_lengths"]),
                              np.array(inputs["video_second_per_grid"], dtype=np.float32))
    for a, b, expected in zip(ours, hf, (case["outputs"]["position_ids"],
                                         case["outputs"]["mrope_position_deltas"])):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a.reshape(np.shape(expected)), expected)


def test_plan_windows_match_the_whole_prompt():
    model = mrope.Model.from_config("qwen2_5_vl")
    plan = model.plan(IMAGE_PROMPT, IMAGE_GRID)
    whole = plan.positions()
    assert plan.batch_size == 1 and plan.seq_len == 11 and plan.row_lengths == [11]
    chunks = [plan.positions(b, min(b + 4, 11)) for b in range(0, 11, 4)]
    np.testing.assert_array_equal(np.concatenate(chunks, axis=2), whole)
    decode = plan.positions(11, 14)
    np.testing.assert_array_equal(decode, plan.decode_positions(3))
    np.testing.assert_array_equal(decode[0, 0], 11 + plan.mrope_position_deltas[0, 0]
                                  + np.arange(3))


def test_cos_sin_of_text_positions():
    model = mrope.Model.from_config("qwen2_vl")  # theta 1e6, head_dim 128
    plan = model.plan([[11, 12, 13]])
    cos, sin = plan.cos_sin()
    assert cos.shape == sin.shape == (1, 3, 64) and cos.dtype == np.float32
    # Text tokens share one position on all axes: pair i rotates by p * theta^(-2i/128).
    inv_freq = 1.0 / (1e6 ** (np.arange(0, 128, 2) / 128))
    angles = np.arange(3)[:, None] * inv_freq[None, :]
    np.testing.assert_allclose(cos[0], np.cos(angles), rtol=0, atol=2e-7)
    np.testing.assert_allclose(sin[0], np.sin(angles), rtol=0, atol=2e-7)
    window_cos, _ = plan.cos_sin(1, 3)
    np.testing.assert_array_equal(window_cos, cos[:, 1:3])


def test_model_is_immutable():
    model = mrope.Model.from_config("qwen3_vl")
    with pytest.raises(AttributeError):
        model.family = "qwen2_vl"


@pytest.mark.parametrize("call, message", [
    (lambda m: mrope.Model.from_config("no_such_model"), "no_such_model"),
    (lambda m: m.get_rope_index([[11, 12, VISION_START]]), "row 0, token 2"),
    (lambda m: m.get_rope_index(IMAGE_PROMPT), "image_grid_thw"),
    (lambda m: m.get_rope_index(IMAGE_PROMPT, [[1, 4, 4], [1, 2, 2]]), "image_grid_thw"),
    (lambda m: m.get_rope_index(IMAGE_PROMPT, [[1, 4]]), "image_grid_thw: expected [N, 3]"),
    (lambda m: m.get_rope_index([11, 12]), "input_ids: expected a 2-D"),
    (lambda m: m.get_rope_index([["a", "b"]]), "input_ids"),
    (lambda m: m.get_rope_index([[1.5, 2.0]]), "input_ids: expected integers"),
    (lambda m: m.get_rope_index([[11, -5]]), "-5"),
    (lambda m: m.get_rope_index([[11, 12]], attention_mask=[[1]]), "attention_mask"),
    (lambda m: m.get_rope_index([[11, 12]], attention_mask=[[1, 7]]), "7"),
    (lambda m: mrope.Model.from_config("qwen2_5_vl").get_rope_index(
        [[11, 12]], video_second_per_grid=[1.0]), "video_second_per_grid is not read"),
    (lambda m: m.plan([[11, 12]]).positions(0), "give both begin and end"),
    (lambda m: m.plan([[11, 12]]).positions(2, 1), "window [2, 1)"),
    (lambda m: m.plan([[11, 12]]).decode_positions(0), "steps must be >= 1"),
])
def test_bad_input_raises_value_error_with_mrope_message(call, message):
    model = mrope.Model.from_config("qwen2_vl")
    with pytest.raises(ValueError) as error:
        call(model)
    assert message in str(error.value)


def test_presets_lists_every_loadable_preset():
    presets = mrope.presets()
    assert presets[:2] == ["qwen2_vl", "qwen2_vl_hf_v5_2"]  # the family table's order
    assert {"qwen2_5_vl_hf", "qwen2_5_vl_vllm", "qwen3_vl", "qwen2_5_omni", "qwen3_omni",
            "glm4v", "glm4v_moe", "qwen3_5", "glm46v", "ernie4_5_vl_moe"} <= set(presets)
    assert len(set(presets)) == len(presets)
    for name in presets:
        assert mrope.Model.from_config(name).name == name
    # Every golden case's model is a preset.
    assert {case["model"] for _, case in golden.load_cases()} <= set(presets)
    with pytest.raises(ValueError, match=", ".join(presets)):
        mrope.Model.from_config("no_such_model")


def test_array_layouts_and_dtypes_read_alike():
    model = mrope.Model.from_config("qwen2_vl")
    ids = np.array(IMAGE_PROMPT * 2)
    mask = np.ones_like(ids)
    mask[1, :2] = 0
    expected = model.get_rope_index(ids, IMAGE_GRID * 2, attention_mask=mask)
    wide = np.zeros((2, ids.shape[1] * 2), dtype=np.int64)
    wide[:, ::2] = ids
    variants = [(ids.astype(np.int32), mask.astype(bool)),  # converted copies
                (np.asfortranarray(ids), np.asfortranarray(mask)),
                (wide[:, ::2], mask.astype(np.uint8)),  # a strided view
                (ids.tolist(), mask.tolist())]
    for variant_ids, variant_mask in variants:
        ours = model.get_rope_index(variant_ids, np.array(IMAGE_GRID * 2, dtype=np.int32),
                                    attention_mask=variant_mask)
        for a, b in zip(ours, expected):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(expected[0][:, 1, :2], 1)  # padding slots


def test_bad_arguments_raise_type_error():
    model = mrope.Model.from_config("qwen2_vl")
    with pytest.raises(TypeError, match="unexpected keyword argument 'mask'"):
        model.get_rope_index([[11]], mask=[[1]])
    with pytest.raises(TypeError, match="got both 'audio_feature_lengths' and 'audio_seqlens'"):
        mrope.Model.from_config("qwen2_5_omni").get_rope_index(
            [[11]], audio_feature_lengths=[4], audio_seqlens=[4])
    with pytest.raises(TypeError, match="multiple values for argument 'attention_mask'"):
        model.get_rope_index([[11]], None, None, [[1]], attention_mask=[[1]])
    with pytest.raises(TypeError, match="too many positional arguments"):
        model.get_rope_index([[11]], None, None, [[1]], [[1]])


class DlpackOnly:
    """An array-like that offers DLPack and no __array__ (as GPU array libraries do)."""

    def __init__(self, array):
        self._array = np.ascontiguousarray(array)

    def __dlpack__(self, stream=None):
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack_inputs():
    model = mrope.Model.from_config("qwen2_vl")
    ours = model.get_rope_index(DlpackOnly(np.array(IMAGE_PROMPT)),
                                DlpackOnly(np.array(IMAGE_GRID)))
    for a, b in zip(ours, model.get_rope_index(IMAGE_PROMPT, IMAGE_GRID)):
        assert type(a) is np.ndarray
        np.testing.assert_array_equal(a, b)


COMPASS = os.path.join(golden.REPO_DIR, "examples/configs/v5_defaults/cohere_compass.json")


def test_cohere_compass_rotary_per_layer_type():
    """Cohere Compass: positions for the model, a rotary per attention layer type (its config's
    layer_types and rope_parameters keyed by them; full_attention is NoPE)."""
    model = mrope.Model.from_config(COMPASS)
    assert model.layer_types[:4] == ("sliding_attention",) * 3 + ("full_attention",)
    assert len(model.layer_types) == 40 and mrope.Model.from_config("qwen3_vl").layer_types == ()
    positions, _ = model.get_rope_index([[1, 255028, 255031, 255031, 255031, 255031, 255029, 2]],
                                        image_grid_thw=[[1, 4, 4]],
                                        mm_token_type_ids=[[0, 0, 1, 1, 1, 1, 0, 0]])
    sliding = model.for_layer_type("sliding_attention")
    assert model.for_layer_type("full_attention") is None
    assert model.cos_sin(positions, layer_type="full_attention", transformers="5.23.0") is None
    cos, sin = model.cos_sin(positions, layer_type="sliding_attention", transformers="5.23.0")
    want = sliding.cos_sin(positions, transformers="5.23.0")
    assert cos.shape == (1, 8, 128) and np.array_equal(cos, want[0])
    assert np.array_equal(sliding.plan([[1, 2, 3]]).positions(),
                          model.plan([[1, 2, 3]]).positions())
    # The same rotary as the preset's sliding layers (the example config is the preset's).
    preset = mrope.Model.from_config("cohere_compass").for_layer_type("sliding_attention")
    assert np.array_equal(preset.cos_sin(positions, transformers="5.23.0")[1], sin)
    copy = pickle.loads(pickle.dumps(sliding))
    assert copy == sliding and np.array_equal(copy.cos_sin(positions, transformers="5.23.0")[0],
                                              cos)
    with pytest.raises(ValueError, match="rotary per layer type .sliding_attention, "
                                         "full_attention.: pick one"):
        model.cos_sin(positions, transformers="5.23.0")
    with pytest.raises(ValueError, match="rotary per layer type"):
        model.plan([[1, 2, 3]]).cos_sin()
    with pytest.raises(ValueError, match="no such layer; its types: sliding_attention, "
                                         "full_attention"):
        model.for_layer_type("chunked_attention")
    with pytest.raises(ValueError, match="one rotary for all its layers"):
        mrope.Model.from_config("qwen3_vl").cos_sin(positions, layer_type="sliding_attention")
    with pytest.raises(ValueError, match="rotary is per layer type; give its config.json"):
        mrope.Model.from_config("cohere_compass", {"rope_theta": 5e4})


def test_cohere_compass_vllm_takes_images_only():
    """vLLM's Cohere Compass code raises on a video; mrope's cohere_compass_vllm refuses it."""
    model = mrope.Model.from_config("cohere_compass_vllm")
    tokens = np.array([1, 255028, 255032, 255032, 255032, 255032, 255029, 2])
    video = {"modality": "video", "mm_position": {"offset": 2, "length": 4},
             "data": {"video_grid_thw": [1, 4, 4]}}
    with pytest.raises(ValueError, match="vLLM's cohere_compass code takes images only"):
        model.get_mrope_input_positions(tokens, [video])
    image = dict(video, modality="image", data={"image_grid_thw": [1, 4, 4]})
    positions, delta = model.get_mrope_input_positions(
        np.where(tokens == 255032, 255031, tokens), [image])
    assert delta == -2 and np.asarray(positions)[:, -1].tolist() == [5, 5, 5]


def test_hunyuan_positions_take_one_axis_per_section():
    """HunYuan-VL's XD-RoPE: [len(mrope_section), B, L] positions (the image's grid tokens take
    (column, row, image) on the last three axes), decode per axis, windows, cos/sin of those
    axes; the sections' count sets the axes."""
    model = mrope.Model.from_config("hunyuan_vl")
    ids = [[7, 120118] + [120120] * 6 + [120119, 8]]  # text, <start>, begin, 2x2 grid, end, ...
    types = [[0, 0] + [1] * 6 + [0, 0]]
    positions, deltas = model.get_rope_index(ids, types, [[1, 4, 2]])
    assert positions.shape == (4, 1, 10) and positions.dtype == np.int64
    np.testing.assert_array_equal(positions[0, 0], np.arange(10))
    np.testing.assert_array_equal(positions[1, 0], [0, 1, 2, 0, 1, 0, 1, 7, 8, 9])
    np.testing.assert_array_equal(positions[2, 0], [0, 1, 2, 0, 0, 1, 1, 7, 8, 9])
    np.testing.assert_array_equal(positions[3, 0], [0, 1, 2, 0, 0, 0, 0, 7, 8, 9])
    np.testing.assert_array_equal(deltas, [[0]])
    plan = model.plan(ids, types, [[1, 4, 2]])
    np.testing.assert_array_equal(plan.decode_positions(2), np.full((4, 1, 2), [10, 11]))
    # Windows slice the whole; past the prompt they are the decode steps.
    np.testing.assert_array_equal(plan.positions(0, 4), positions[:, :, :4])
    np.testing.assert_array_equal(
        plan.positions(8, 12), np.concatenate([positions[:, :, 8:], plan.decode_positions(2)], 2))
    with pytest.raises(ValueError, match=r"window \[3, 2\) must have 0 <= begin < end"):
        plan.positions(3, 2)
    cos, sin = model.cos_sin(positions, transformers="5.23.0")
    assert cos.shape == sin.shape == (1, 10, 128)
    one_axis, _ = model.cos_sin(positions[0], transformers="5.23.0")  # [B, T]: every axis the token's index
    np.testing.assert_array_equal(cos[0, :3], one_axis[0, :3])  # text: all axes agree
    assert not np.array_equal(cos[0, 4], one_axis[0, 4])  # a grid token: they do not
    five = mrope.Model.from_config("hunyuan_vl", {"mrope_section": [16, 16, 16, 8, 8]})
    assert five.get_rope_index(ids, types, [[1, 4, 2]])[0].shape == (5, 1, 10)
    # The plan's cos/sin (the service's, per element for XD-RoPE) are the module's: whole and
    # windowed, HF's layout; one per pair cannot hold a pair's two axes.
    plan_cos, plan_sin = plan.cos_sin(layout="hf", transformers="5.23.0")
    np.testing.assert_array_equal(plan_cos, cos)
    np.testing.assert_array_equal(plan_sin, sin)
    window_cos, _ = plan.cos_sin(3, 8, layout="hf", transformers="5.23.0")
    np.testing.assert_array_equal(window_cos, cos[:, 3:8])
    with pytest.raises(ValueError, match="layout='pairs' cannot"):
        plan.cos_sin()
