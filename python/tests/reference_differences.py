"""Every difference between mrope and an installed reference that the differential tests
(test_reference_transformers.py) accept: one row each (a row's family may be a tuple of the
families that run one reference function). A (reference, family) pair without a row must
agree bit for bit on every prompt under the convention mrope resolves for the release
(Model.from_config(family, convention="transformers==X")); with a row, mrope may differ only
in the row's fields, and at least one prompt must show the difference (a fixed reference
retires it).
Where `reproduced_by` names preset overrides, mrope with them must agree bit for bit.

Fields mrope and a reference can differ in (test_reference_transformers.FIELDS):
positions (on real tokens), padding (positions in padding slots), deltas, dtypes, decode.
"""
import collections

Difference = collections.namedtuple(
    "Difference",
    "name references family fields reproduced_by reference_line what test")

# None today: transformers 5.23.0 and 4.57.6 are each reproduced by the convention mrope's
# release table names for them (mrope/model/conventions.cc). The rows retired by the
# conventions by release: Qwen2.5-VL's video time from 5.18.0 (PR #48669; transformers-5.18,
# hf_v5_18) and, from 5.3.0, GLM-4.1V's, GLM-4.6V's, Qwen3.5's, PaddleOCR-VL's and
# ERNIE-4.5-VL's 5.3 get_rope_index (padding 0, the unpadded delta, decode per axis, ERNIE's
# text resuming at start + max(h, w) / merge: transformers-5.3, hf_v5).
DIFFERENCES = ()


def _version(text):
    return tuple(int(part) for part in text.split("."))


def difference_for(version, family):
    """The row covering transformers `version` (a tuple) and `family`, or None."""
    rows = [d for d in DIFFERENCES
            if family in ((d.family,) if isinstance(d.family, str) else d.family) and
            version >= _version(d.references.lstrip(">="))]
    assert len(rows) <= 1, rows
    return rows[0] if rows else None
