"""Pickling mrope.Model (by what it was made from) and ValueError for unconvertible arguments."""
import multiprocessing
import os
import pickle
import shutil

import numpy as np
import pytest

import golden
import mrope
from test_api import IMAGE_GRID, IMAGE_PROMPT

CONFIG = os.path.join(golden.REPO_DIR, "examples", "configs", "Qwen2.5-VL-7B-Instruct.json")


def _positions(model):
    """What a DataLoader worker would compute with the model it was sent."""
    positions, deltas = model.get_rope_index(IMAGE_PROMPT, IMAGE_GRID)
    return model.name, model.family, model.convention, positions.tolist(), deltas.tolist()


def _models(tmp_path):
    shutil.copy(CONFIG, tmp_path / "config.json")
    return [
        mrope.Model.from_config("qwen2_vl"),
        mrope.Model.from_config("qwen2_5_vl_vllm"),
        mrope.Model.from_config("qwen2_5_vl", {"video_time_rounding": "truncate_interval_first",
                                               "spatial_merge_size": 2}),
        mrope.Model.from_config(CONFIG),
        mrope.Model.from_config(tmp_path),  # a checkpoint directory: its config.json
    ]


def test_round_trip_gives_an_equal_model(tmp_path):
    for model in _models(tmp_path):
        copy = pickle.loads(pickle.dumps(model))
        assert copy == model and hash(copy) == hash(model)
        assert _positions(copy) == _positions(model)
    assert mrope.Model.from_config("qwen2_vl") != mrope.Model.from_config("qwen2_5_vl")
    assert (mrope.Model.from_config("qwen2_5_vl", {"spatial_merge_size": 1}) !=
            mrope.Model.from_config("qwen2_5_vl", {"spatial_merge_size": 2}))


def test_config_contents_travel_with_the_pickle(tmp_path):
    path = tmp_path / "config.json"
    shutil.copy(CONFIG, path)
    data = pickle.dumps(mrope.Model.from_config(path))
    os.remove(path)  # the receiving side need not have the file
    model = pickle.loads(data)
    assert model.name == str(path) and model.family == "qwen2_5_vl"


def test_models_go_through_a_spawn_pool(tmp_path):
    models = _models(tmp_path)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.map(_positions, models)
    assert results == [_positions(model) for model in models]


@pytest.mark.parametrize("bad", [np.array(None), np.array([object()]), "abc", {"a": 1}])
def test_unconvertible_arguments_name_the_argument(bad):
    model = mrope.Model.from_config("qwen2_vl")
    with pytest.raises(ValueError, match="image_grid_thw"):
        model.get_rope_index(np.array(IMAGE_PROMPT), bad)
    with pytest.raises(ValueError, match="input_ids"):
        model.get_rope_index(bad)
    with pytest.raises(ValueError, match="attention_mask"):
        model.get_rope_index(np.array(IMAGE_PROMPT), IMAGE_GRID, None, bad)
