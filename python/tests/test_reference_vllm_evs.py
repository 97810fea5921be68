"""mrope against vLLM's EVS (efficient video sampling) positions run live, with chunked prefill:
seeded random EVS-pruned requests (reference_prompts_evs.py) driven step by step through the
installed vLLM's own code as Model Runner V2 runs it (reference_runner_vllm_evs.py: initial
positions, the encoder outputs with their position channels, then per prefill step the
window's embeddings through MultiModalPruner.recompute), compared bit for bit with mrope's
plan_vllm(tokens, mm_features, keep_masks, embed_dtype, video_pruning_rate): every step's
window with plan.positions(start, end) (mrope's windows are slices of the one-step result) and
the delta. The keep masks are vLLM's (its retention mask of the random embeddings).

vLLM's defects are the rows of reference_differences.py (tests/golden/README.md, "vLLM EVS
rules"): a request may differ only where mrope's plan names E2, E4 or E5 (then vLLM's one
prefill step must differ), or from the first step that E6 covers (step_case); each row, and
with 100 requests or more each of E6's cases, must show.

Options (conftest.py): --cases N requests per family, --seed S.
"""
import functools
import sys

import numpy as np
import pytest

import mrope
import reference_differences
import reference_env
import reference_prompts
import reference_prompts_evs

FAMILIES = reference_prompts_evs.FAMILIES
# vLLM's Qwen3.5 class is Qwen3-VL's with its EVS code (qwen3_5.py:
# Qwen3_5ForConditionalGeneration(Qwen3VLForConditionalGeneration)): checked against
# qwen3_vl_vllm with Qwen3.5's token ids.
ON_A_ROW = {"qwen3_5": "qwen3_vl"}
REFERENCES = reference_env.pinned("vllm")
# E6's cases (step_case), and which families can show them.
E6_CASES = {
    "right after <vision_start>": FAMILIES,
    "after a finished item": FAMILIES,
    "several items": FAMILIES,
    "inside a video's frames": ("qwen3_vl", "qwen3_5"),
    "video slice without video tokens": ("qwen3_vl", "qwen3_5"),
}


def pytest_generate_tests(metafunc):
    pairs = [(r, f) for r in REFERENCES for f in FAMILIES]
    if "index" in metafunc.fixturenames:
        params = [(r, f, i) for r, f in pairs for i in range(metafunc.config.getoption("cases"))]
        metafunc.parametrize("reference,family,index", params,
                             ids=[f"{r}-{f}-{i}" for r, f, i in params])
    elif "family" in metafunc.fixturenames:
        metafunc.parametrize("reference,family", pairs, ids=[f"{r}-{f}" for r, f in pairs])
    elif "reference" in metafunc.fixturenames:
        metafunc.parametrize("reference", list(REFERENCES))


@functools.lru_cache(maxsize=None)
def requests(family, cases, seed):
    return reference_prompts_evs.random_requests(family, cases, seed)


def run_reference(reference, families):
    """vLLM's results for {family: [request]}."""
    return reference_env.run("reference_runner_vllm_evs.py", REFERENCES[reference][1], {
        "families": {f: (reference_prompts.FAMILY_CONFIG[f], r) for f, r in families.items()}})


@functools.lru_cache(maxsize=None)
def reference_outputs(reference, cases, seed):
    return run_reference(reference, {f: requests(f, cases, seed) for f in FAMILIES})


@functools.lru_cache(maxsize=None)
def model_for(family):
    return mrope.Model.from_config(ON_A_ROW.get(family, family) + "_vllm",
                                   overrides=reference_prompts.FAMILY_CONFIG[family])


def as_feature(modality, offset, length, grid, seconds, _):
    data = {f"{modality}_grid_thw": list(grid)}
    if seconds is not None:
        data["second_per_grid_ts"] = seconds
    return {"modality": modality, "mm_position": {"offset": offset, "length": length},
            "data": data}


def plan_for(family, request, masks):
    return model_for(family).plan_vllm(
        request["tokens"], [as_feature(*f) for f in request["features"]], keep_masks=masks,
        embed_dtype=request["dtype"], video_pruning_rate=request["rate"])


def step_case(family, request, start, end):
    """The case of E6 that prefill step [start, end) falls under, or None where vLLM 0.33's
    recompute_mrope_positions places its items right (or has none to place): the first step,
    a step that starts before every <vision_start> and holds one item's start, and a step
    resuming inside one Qwen2.5-VL item or image. Read from vllm/multimodal/video_prune/evs.py:
    a later step looks for the last <vision_start> before it (line 264) and counts the media
    tokens before the step once (line 225), whatever item it is placing."""
    ids = reference_prompts.FAMILY_CONFIG[family]
    tokens = request["tokens"]
    items = [f for f in request["features"] if f[1] < end and f[1] + f[2] > start]
    frames = family != "qwen2_5_vl"
    for modality, offset, length, *_ in items:
        if frames and modality == "video":
            block = tokens[offset:offset + length]
            pads = block.index(ids["vision_start_token_id"]) + 1 + offset
            if not (start < pads + block.count(ids["video_token_id"]) and end > pads):
                return "video slice without video tokens"  # line 250: taken as an image
    if not items or start == 0:
        return None
    if len(items) > 1:
        return "several items"
    modality, offset = items[0][:2]
    video_frames = frames and modality == "video"
    if start > offset:
        return "inside a video's frames" if video_frames else None
    if start == offset and not video_frames:
        return "right after <vision_start>"
    if ids["vision_start_token_id"] not in tokens[:start]:
        return None
    return "after a finished item"


def differing(run, schedule, plan, steps=None):
    """The fields in which vLLM's run of `schedule` differs from mrope's plan over its first
    `steps` steps (default all, and then the delta too)."""
    steps = len(schedule) if steps is None else steps
    if "error" in run and run["step"] < steps:
        return ["raises"]
    fields = []
    windows = zip(run.get("windows", []), schedule[:steps])
    if any(not np.array_equal(w, plan.positions(a, b)[:, 0, :]) for w, (a, b) in windows):
        fields.append("positions")
    if steps == len(schedule) and "error" not in run and run["delta"] != plan.rope_deltas.item():
        fields.append("deltas")
    return fields


@functools.lru_cache(maxsize=None)
def verdict(reference, family, index, cases, seed):
    """(where, rules mrope names, fields vLLM's one step differs in, per chunked schedule
    (its first E6 step's case or None, fields differing before that step, fields differing
    in all))."""
    request = requests(family, cases, seed)[index]
    outputs = reference_outputs(reference, cases, seed)
    theirs = outputs["results"][family][index]
    where = f"{reference} {outputs['sources'][family]}, request {request['layout']}"
    plan = plan_for(family, request, theirs["masks"])
    named = tuple(sorted({d[1] for d in plan.vllm_defects if not d[3]}))
    one_step = differing(theirs["runs"][0], request["schedules"][0], plan)
    chunked = []
    for schedule, run in zip(request["schedules"][1:], theirs["runs"][1:]):
        cases_of = [step_case(family, request, a, b) for a, b in schedule]
        first = next((k for k, c in enumerate(cases_of) if c), len(schedule))
        chunked.append((cases_of[first] if first < len(schedule) else None,
                        differing(run, schedule, plan, first), differing(run, schedule, plan)))
    return where, named, one_step, chunked


def test_reference_is_the_pinned_release(reference, request):
    outputs = reference_outputs(reference, request.config.getoption("cases"),
                                request.config.getoption("seed"))
    assert "vllm==" + outputs["version"] == reference


def test_evs_request(reference, family, index, request):
    where, named, one_step, chunked = verdict(reference, family, index,
                                              request.config.getoption("cases"),
                                              request.config.getoption("seed"))
    rows = {r.name: r for r in reference_differences.rows_for(reference, family)}
    assert set(named) <= set(rows), f"{where}: mrope names {named}, rows {sorted(rows)}"
    if named:
        assert one_step, f"{where}: mrope names {named}, but vLLM's one prefill step agrees"
        allowed = set().union(*(rows[r].fields for r in named))
        assert set(one_step) <= allowed, f"{where}: {one_step} beyond {named}'s {allowed}"
        return  # the chunked schedules place the same items as wrongly
    assert one_step == [], f"{where}: vLLM's one prefill step differs in {one_step}"
    schedules = requests(family, request.config.getoption("cases"),
                         request.config.getoption("seed"))[index]["schedules"][1:]
    for schedule, (case, before, fields) in zip(schedules, chunked):
        assert before == [], f"{where}, steps {schedule}: differ in {before} before E6 applies"
        if case is None:
            assert fields == [], f"{where}, steps {schedule}: differ in {fields}"
        else:
            assert set(fields) <= set(rows["E6"].fields), f"{where}, steps {schedule}: {fields}"


def test_known_differences_are_shown(reference, family, request):
    """A row that no request shows is stale (a fixed reference retires it), and each of E6's
    cases must show: checked on 100 requests or more (E2 and E5 need a few dozen)."""
    cases, seed = request.config.getoption("cases"), request.config.getoption("seed")
    if cases < 100:
        pytest.skip(f"{cases} requests: too few to show every row")
    rules, e6_cases = set(), set()
    for index in range(cases):
        _, named, one_step, chunked = verdict(reference, family, index, cases, seed)
        if one_step:
            rules.update(named)
        e6_cases.update(case for case, _, fields in chunked if case and fields)
    if e6_cases:
        rules.add("E6")
    rows = {r.name for r in reference_differences.rows_for(reference, family)}
    assert rows <= rules, f"rows {sorted(rows)}, shown {sorted(rules)}"
    expected = {c for c, families in E6_CASES.items() if family in families}
    assert expected <= e6_cases, f"E6 cases not shown: {sorted(expected - e6_cases)}"


def test_issue_example(reference):
    """Issue 33's smallest case: Qwen2.5-VL, text 2, a 4x4x4 video at 1 s per grid (8 of 16
    tokens kept), text 2; vLLM's one step agrees with mrope, steps [0, 3) and [3, 14) raise
    IndexError (E6: right after <vision_start>)."""
    ids = reference_prompts.FAMILY_CONFIG["qwen2_5_vl"]
    tokens = ([11, 12, ids["vision_start_token_id"]] + [ids["video_token_id"]] * 8 +
              [ids["vision_end_token_id"], 13, 14])
    example = {"tokens": tokens, "features": [("video", 3, 8, (4, 4, 4), np.float32(1.0), None)],
               "stamps": {}, "rate": 0.5, "dtype": "bfloat16", "seed": 0,
               "schedules": [[(0, 14)], [(0, 3), (3, 14)]]}
    theirs = run_reference(reference, {"qwen2_5_vl": [example]})["results"]["qwen2_5_vl"][0]
    plan = plan_for("qwen2_5_vl", example, theirs["masks"])
    assert plan.vllm_defects == []
    assert differing(theirs["runs"][0], [(0, 14)], plan) == []
    assert theirs["runs"][1]["step"] == 1 and theirs["runs"][1]["error"].startswith("IndexError")
    assert step_case("qwen2_5_vl", example, 3, 14) == "right after <vision_start>"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__] + sys.argv[1:]))
