"""One Model shared by many threads gives every thread the single-threaded results."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import golden

ROUNDS = 20


def test_shared_models_across_threads():
    cases = [c for _, c in golden.load_cases()]
    models = {c["model"]: golden.model_for(c) for c in cases}

    def run(case):
        inputs = case["inputs"]
        return models[case["model"]].get_rope_index(
            inputs["input_ids"], inputs.get("image_grid_thw"), inputs.get("video_grid_thw"),
            **golden.media_kwargs(case))

    expected = [run(c) for c in cases]
    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(ROUNDS):
            for (positions, deltas), (want_positions, want_deltas) in zip(
                    pool.map(run, cases), expected):
                np.testing.assert_array_equal(positions, want_positions)
                np.testing.assert_array_equal(deltas, want_deltas)
