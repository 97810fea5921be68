"""Seeded random EVS-pruned vLLM requests with chunked-prefill schedules, for
test_reference_vllm_evs.py. numpy only.

A request is laid out as vLLM's processors lay out a prompt whose videos EVS prunes
(tests/golden/README.md, "vLLM EVS rules" E1), in the token ids of reference_prompts.py: text
runs with 1-3 images or videos; a video keeps K = max(h'w', int(t h'w' (1 - rate))) tokens
(Qwen2.5-VL: <vs> K pads <ve>; Qwen3-VL and Qwen3.5: per frame "<x.y seconds>", <vs>, pads,
<ve>, all K pads in frame 0, inside an outer <vs> ... <ve> in transformers >= 5.10's layout).
Its schedules split the prompt into prefill steps, with boundaries drawn among those that
matter to vLLM's recompute (right after a <vs>, inside an item, at and after an item's end) and
anywhere.
"""
import numpy as np

import reference_prompts as prompts

FAMILIES = ("qwen2_5_vl", "qwen3_vl", "qwen3_5")
RATES = (0.25, 1 / 3, 0.5, 0.75, 0.9)
DTYPES = ("bfloat16", "float32")
# Qwen3-VL's processor layouts: before transformers 5.10 and from it (the outer pair).
QWEN3_LAYOUTS = ((5, 9), (5, 23))
SCHEDULES = 3  # chunked schedules per request, besides the one-step one


def _video(rng, family, grid, fps, rate, version, stamps):
    """(tokens, placeholder start in them, placeholder length, timestamps) of a pruned video."""
    ids = prompts.FAMILY_CONFIG[family]
    t, h, w = grid
    frame = h * w // 4
    kept = max(frame, int(t * frame * (1 - rate)))
    if prompts.LAYOUT[family] == "qwen2":
        return ([ids["vision_start_token_id"]] + [ids["video_token_id"]] * kept +
                [ids["vision_end_token_id"]], 1, kept, None)
    outer = int(version >= (5, 10))
    tokens = [ids["vision_start_token_id"]] * outer
    timestamps = [(2 * k + 1) / fps for k in range(t)]  # a frame pair's middle, in seconds
    for k, stamp in enumerate(timestamps):
        text = stamps.setdefault(f"<{stamp:.1f} seconds>",
                                 prompts._text(rng, family, int(rng.integers(3, 7))))
        tokens += text + [ids["vision_start_token_id"]]
        tokens += [ids["video_token_id"]] * (kept if k == 0 else 0)
        tokens += [ids["vision_end_token_id"]]
    return (tokens + [ids["vision_end_token_id"]] * outer, outer, len(tokens) - outer,
            timestamps)


def _schedules(rng, tokens, features, ids):
    """SCHEDULES lists of (start, end) steps covering the prompt."""
    n = len(tokens)
    marks = set()
    for _, offset, length, _, _, _ in features:
        end = offset + length
        starts = [i for i in range(max(offset - 1, 0), end)
                  if tokens[i] == ids["vision_start_token_id"]]
        marks.update(s + 1 for s in starts)  # right after a <vision_start>
        marks.update((int(rng.integers(offset, end)), end, end + 1))  # inside, at, after end
    marks = sorted(m for m in marks if 0 < m < n)
    out = []
    for _ in range(SCHEDULES):
        picked = set()
        for _ in range(int(rng.integers(1, 5))):
            if marks and rng.random() < 0.75:
                picked.add(marks[int(rng.integers(0, len(marks)))])
            elif n > 1:
                picked.add(int(rng.integers(1, n)))
        bounds = [0] + sorted(picked) + [n]
        out.append(list(zip(bounds, bounds[1:])))
    return out


def _request(rng, family, version):
    ids = prompts.FAMILY_CONFIG[family]
    rate = float(RATES[int(rng.integers(0, len(RATES)))])
    # Now and then an item at token 0 (a Qwen3-VL video there takes its base from index -1).
    tokens = prompts._text(rng, family, 0 if rng.random() < 0.1 else int(rng.integers(1, 12)))
    layout, features, stamps = [f"T{len(tokens)}"] if tokens else [], [], {}
    for _ in range(int(rng.integers(1, 4))):
        video = rng.random() < 0.7
        grid = prompts._grid(rng, family, video)
        if video:
            fps = float(prompts.FPS[int(rng.integers(0, len(prompts.FPS)))])
            block, start, length, timestamps = _video(rng, family, grid, fps, rate, version,
                                                      stamps)
            seconds = np.float32(2.0 / fps) if family == "qwen2_5_vl" else None
            layout.append("V%dx%dx%d@%gfps" % (*grid, fps))
        else:
            block, _ = prompts._image_tokens(family, grid, ids)
            start, length, seconds, timestamps = 1, len(block) - 2, None, None
            layout.append("I%dx%dx%d" % grid)
        features.append(("video" if video else "image", len(tokens) + start, length, grid,
                         seconds, timestamps))
        text = int(rng.integers(0, 8))
        if video and family == "qwen2_5_vl" and rng.random() < 0.75:
            # Mostly text as long as the pruned tokens: else vLLM's initial positions step
            # past a later item and raise (rule E2), and no step is run.
            text += grid[0] * grid[1] * grid[2] // 4 - length
        tokens += block + prompts._text(rng, family, text)
        if text:
            layout.append(f"T{text}")
    return {
        "tokens": tokens, "features": features, "stamps": stamps, "rate": rate,
        "dtype": DTYPES[int(rng.integers(0, len(DTYPES)))], "seed": int(rng.integers(0, 2**31)),
        "schedules": [[(0, len(tokens))]] + _schedules(rng, tokens, features, ids),
        "layout": "%s q=%g %s" % (" ".join(layout), rate,
                                  "" if family == "qwen2_5_vl" else
                                  "outer-pair" if version >= (5, 10) else "no-outer-pair"),
    }


def random_requests(family, count, seed):
    """`count` requests, the same for the same arguments; Qwen3-VL's and Qwen3.5's alternate
    the two processor layouts."""
    rng = np.random.default_rng([seed, FAMILIES.index(family), 48835])
    return [_request(rng, family, QWEN3_LAYOUTS[i % 2]) for i in range(count)]
