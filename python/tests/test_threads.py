"""One Model shared by many threads gives every thread the single-threaded results, and the
GIL is released while mrope computes."""
from concurrent.futures import ThreadPoolExecutor
import sys
import threading
import time

import numpy as np

import golden
import mrope

ROUNDS = 20


def test_shared_models_across_threads():
    cases = [c for _, c in golden.load_cases()]
    models = {c["model"]: golden.model_for(c) for c in cases}

    def run(case):
        inputs = case["inputs"]
        return models[case["model"]].get_rope_index(
            inputs["input_ids"], image_grid_thw=inputs.get("image_grid_thw"),
            video_grid_thw=inputs.get("video_grid_thw"), **golden.media_kwargs(case))

    expected = [run(c) for c in cases]
    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(ROUNDS):
            for (positions, deltas), (want_positions, want_deltas) in zip(
                    pool.map(run, cases), expected):
                np.testing.assert_array_equal(positions, want_positions)
                np.testing.assert_array_equal(deltas, want_deltas)


def test_gil_is_released_while_computing():
    # With a switch interval of 100 s, the interpreter never hands the GIL to a waiting
    # thread by itself: `other` can only run while a call releases it.
    model = mrope.Model.from_config("qwen2_vl")
    ids = np.full((1, 1 << 20), 11, dtype=np.int64)  # one million text tokens
    go, ran = threading.Event(), threading.Event()
    other = threading.Thread(target=lambda: go.wait() and ran.set())
    other.start()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(100)
    try:
        go.set()
        deadline = time.monotonic() + 10
        while not ran.is_set() and time.monotonic() < deadline:
            model.get_rope_index(ids)
        released = ran.is_set()  # before anything below lets `other` run
    finally:
        sys.setswitchinterval(interval)
        go.set()
        other.join()
    assert released
