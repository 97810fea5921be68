"""examples/ray_positions.py on a local Ray cluster (two one-CPU workers on this machine): the
seeded random prompts of the differential tests (reference_prompts.py), one processor output a
row, mapped by Ray Data to positions, deltas and context-parallel slices with one pickled
mrope.Model; every row equal to the same function called in this process.
"""
import os
import tempfile

import numpy as np
import pytest
import ray

import golden
import mrope
import reference_prompts

FAMILIES = ("qwen2_vl", "qwen3_vl")  # their transformers v4 layout, the presets' convention
PROMPTS = 12  # batches per family; each has 1-4 rows
CP_SIZE = 2
WORKERS = 2


example = golden.load_script("ray_positions",
                              os.path.join(golden.REPO_DIR, "examples", "ray_positions.py"))


def processor_outputs(family):
    """Each row of the prompts, unpadded, as a processor returns one prompt: ids, mask, and
    the row's image and video grids."""
    rows = []
    for prompt in reference_prompts.random_prompts(family, (4, 57), PROMPTS, seed=0):
        for b, features in enumerate(prompt["features"]):
            mask = prompt["attention_mask"][b].astype(bool)
            grids = {m: [list(f[3]) for f in features if f[0] == m] for m in ("image", "video")}
            rows.append({"id": len(rows), "input_ids": prompt["input_ids"][b][mask].tolist(),
                         "attention_mask": [1] * int(mask.sum()),
                         "image_grid_thw": grids["image"], "video_grid_thw": grids["video"]})
    return rows


@pytest.fixture(scope="module")
def cluster():
    # A short temp dir: Ray's unix sockets live there (Bazel's TEST_TMPDIR is too long).
    # No token written to $HOME (which Bazel tests lack): the cluster lives in this test.
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    with tempfile.TemporaryDirectory(prefix="ray", dir="/tmp") as temp_dir:
        ray.init(num_cpus=WORKERS, include_dashboard=False, log_to_driver=False,
                 _temp_dir=temp_dir)
        yield
        ray.shutdown()


@pytest.mark.parametrize("family", FAMILIES)
def test_ray_data_equals_one_process(cluster, family):
    model = mrope.Model.from_config(family, overrides=reference_prompts.FAMILY_CONFIG[family])
    rows = processor_outputs(family)
    results = example.map_positions(ray.data.from_items(rows), model, CP_SIZE,
                                    WORKERS).take_all()
    assert sorted(r["id"] for r in results) == [r["id"] for r in rows]
    by_id = {r["id"]: r for r in results}
    for row in rows:
        ours = example.prompt_positions(model, row, CP_SIZE)
        theirs = by_id[row["id"]]
        assert set(theirs) == set(ours), row["id"]
        for key, value in ours.items():
            np.testing.assert_array_equal(np.asarray(theirs[key]), np.asarray(value),
                                          err_msg=f"row {row['id']} {key}")
        # The slices are the prompt's own positions, cut: together they cover every token.
        tokens = len(row["input_ids"])
        gathered = np.concatenate([ours[f"cp{r}_token_index"] for r in range(CP_SIZE)])
        real = gathered < tokens
        np.testing.assert_array_equal(
            np.concatenate([ours[f"cp{r}_positions"] for r in range(CP_SIZE)], axis=1)[:, real],
            ours["positions"][:, gathered[real]])
        assert sorted(gathered[real]) == list(range(tokens))
