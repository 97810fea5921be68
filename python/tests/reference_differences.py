"""Every difference between mrope and an installed reference that the differential tests
accept: one row each (a row's family may be a tuple of the families that run one reference
function), named by the reference package and the first release it covers ("vllm>=0.33.0").

transformers (test_reference_transformers.py): a (reference, family) pair without a row must
agree bit for bit on every prompt under the convention mrope resolves for the release
(Model.from_config(family, convention="transformers==X")); with a row, mrope may differ only
in the row's fields, and at least one prompt must show the difference (a fixed reference
retires it). Where `reproduced_by` names preset overrides, mrope with them must agree bit for
bit. Fields: positions (on real tokens), padding (positions in padding slots), deltas, dtypes,
decode (test_reference_transformers.FIELDS).

vLLM's EVS path (test_reference_vllm_evs.py): the rows are the rules of tests/golden/README.md
"vLLM EVS rules" that name vLLM defects; mrope keeps the positions of one prefill step with
every item at its own placeholder. A request may differ only where mrope's plan names the rule
(plan.vllm_defects: E2, E4, E5) or where a prefill step falls under E6, and each row must show.
Fields: positions (of a step's window), deltas, raises (vLLM raises).
"""
import collections

Difference = collections.namedtuple(
    "Difference",
    "name references family fields reproduced_by reference_line what test")

# transformers: none today. 5.23.0 and 4.57.6 are each reproduced by the convention mrope's
# release table names for them (mrope/model/conventions.cc). The rows retired by the
# conventions by release: Qwen2.5-VL's video time from 5.18.0 (PR #48669; transformers-5.18,
# hf_v5_18) and, from 5.3.0, GLM-4.1V's, GLM-4.6V's, Qwen3.5's, PaddleOCR-VL's and
# ERNIE-4.5-VL's 5.3 get_rope_index (padding 0, the unpadded delta, decode per axis, ERNIE's
# text resuming at start + max(h, w) / merge: transformers-5.3, hf_v5).
_EVS = "vllm/multimodal/video_prune/evs.py"
_EVS_TEST = "test_reference_vllm_evs.py::test_evs_request"
_EVS_FAMILIES = ("qwen2_5_vl", "qwen3_vl", "qwen3_5")  # Qwen3.5's class runs Qwen3-VL's code
DIFFERENCES = (
    Difference(
        "E2", "vllm>=0.33.0", "qwen2_5_vl", ("raises",), None,
        "vllm/model_executor/models/qwen2_5_vl.py:1396",
        "the initial positions (get_mrope_input_positions on the pruned prompt) step past a "
        "pruned video by its unpruned t h' w' tokens; a later item placed before that makes "
        "a negative text length: ValueError",
        _EVS_TEST),
    Difference(
        "E4", "vllm>=0.33.0", _EVS_FAMILIES, ("positions", "deltas", "raises"), None,
        f"{_EVS}:297",
        "each item is written after the first <vision_start> at or after c, the rows written "
        "so far (line 352), not at its own placeholder: over an earlier item, or IndexError",
        _EVS_TEST),
    Difference(
        "E5", "vllm>=0.33.0", ("qwen3_vl", "qwen3_5"), ("positions", "deltas", "raises"), None,
        f"{_EVS}:297",
        "transformers >= 5.10's layout: the outer <vision_start> is taken as the video's, so "
        "its rows are written nts + 1 tokens early (line 323), or RuntimeError",
        _EVS_TEST),
    Difference(
        "E6", "vllm>=0.33.0", _EVS_FAMILIES, ("positions", "deltas", "raises"), None,
        f"{_EVS}:264",
        "chunked prefill: a step is placed right only when it starts before every "
        "<vision_start> and holds one item's start, or resumes inside a Qwen2.5-VL item or an "
        "image; else (right after a <vision_start>, after a finished item, several items, "
        "inside a Qwen3-VL video's frames, a video slice without video tokens) its items are "
        "written elsewhere or it raises",
        _EVS_TEST),
)


def _version(text):
    return tuple(int(part) for part in text.split("."))


def rows_for(reference, family):
    """The rows covering `reference` ("package==X") and `family`."""
    package, version = reference.split("==")
    return [d for d in DIFFERENCES
            if family in ((d.family,) if isinstance(d.family, str) else d.family) and
            d.references.startswith(package + ">=") and
            _version(version) >= _version(d.references.split(">=")[1])]


def difference_for(version, family):
    """The row covering transformers `version` (a tuple) and `family`, or None."""
    rows = rows_for("transformers==" + ".".join(map(str, version)), family)
    assert len(rows) <= 1, rows
    return rows[0] if rows else None
