"""The golden position cases (tests/golden, format qwen-mrope-golden/v2) for the tests."""
import glob
import importlib.util
import json
import os

import numpy as np

import mrope
from mrope import _mrope

# The repository root: Bazel's test wrapper sets MROPE_REPO_DIR (its runfiles); from a
# checkout, two levels up.
REPO_DIR = os.environ.get("MROPE_REPO_DIR",
                          os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
GOLDEN_DIR = os.path.join(REPO_DIR, "tests", "golden")


def load_script(name, path):
    """The Python file at `path` (a script or example of the repository, outside any package)
    imported as a module named `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_cases():
    """Every position case, sorted by path, as (id, case dict)."""
    cases = []
    for path in sorted(glob.glob(os.path.join(GOLDEN_DIR, "*", "case_*.json"))):
        with open(path) as f:
            case = json.load(f)
        if case.get("kind") == "position":
            cases.append((f"{case['model']}/{case['case']}", case))
    return cases


def model_for(case):
    """The case's model: its preset (the family's vLLM preset for a vLLM request case) with the
    case's config values as overrides, less the keys that record the case's provenance (C++
    CaseModelOf, mrope/service/case_model.h)."""
    preset, overrides = _mrope.Model.case_model(json.dumps(case))
    return mrope.Model.from_config(preset, overrides=json.loads(overrides))


def position_dtype(case):
    """HF's dtype for the case: float32 for float-position models, else int64."""
    return np.float32 if case["config"].get("position_dtype") == "float32" else np.int64


# The seconds lists: float32 in the golden files, as processors give them (a Python list would
# be read as float64, which HF truncates in its own type).
SECONDS_LISTS = ("second_per_grid_ts", "video_second_per_grid")


def media_kwargs(case):
    """The case's inputs other than input_ids and the grids, as get_rope_index keywords
    (video_timestamps is informational: its text is in the prompt)."""
    skip = ("input_ids", "image_grid_thw", "video_grid_thw", "video_timestamps")
    kwargs = {k: v for k, v in case["inputs"].items() if k not in skip and v is not None}
    for seconds in SECONDS_LISTS:
        if seconds in kwargs:
            kwargs[seconds] = np.array(kwargs[seconds], dtype=np.float32)
    return kwargs


def rope_index_positions(case):
    """get_rope_index's first return: rope_index_position_ids where it differs from what
    generate() prefills (GLM's and ERNIE's text-only batches under v5.2.0)."""
    outputs = case["outputs"]
    return outputs.get("rope_index_position_ids", outputs["position_ids"])


def stored_deltas_key(case):
    """The outputs field holding what generate() stored (Plan.rope_deltas)."""
    outputs = case["outputs"]
    for key in ("rope_deltas", "rope_deltas_thinker"):
        if key in outputs:
            return key
    return "mrope_position_deltas"
