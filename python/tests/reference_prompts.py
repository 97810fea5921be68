"""Seeded random prompts laid out as each family's processor lays them out, for the differential
tests against the references (test_reference_transformers.py). numpy only: the same prompts go
to mrope in the test process and to a reference in its own process (reference_runner.py).

A prompt is a dict: input_ids, attention_mask, mm_token_type_ids ([B, L] int64), image_grid_thw,
video_grid_thw ([N, 3] int64 or None), second_per_grid_ts (float32 per video, Qwen2.5-VL and the
Omni thinker only, as the processor returns it), audio_seqlens (int64 feature frames per audio,
in order, or None) and use_audio_in_video (the batch's flag; Omni only), layout (one readable
string per row, as in tests/golden: A<frames> an audio, V...+A<frames> a video with its audio)
and features (per row, vLLM's view of each item: modality, placeholder offset in the unpadded
row, length, grid, seconds per grid or None).
"""
import numpy as np

# The checkpoints' token ids and vision config (Qwen/Qwen2-VL-7B-Instruct, Qwen2.5-VL-7B,
# Qwen3-VL-8B, THUDM/GLM-4.1V-9B-Thinking; Qwen3.5, GLM-4.6V, PaddleOCR-VL and Qwen4-Exp:
# transformers 5.23's configuration defaults), given to both sides. Families keep their seeds'
# order: a new one goes last.
_QWEN_IDS = {"vision_start_token_id": 151652, "vision_end_token_id": 151653,
             "image_token_id": 151655, "video_token_id": 151656}
_QWEN3_5_IDS = {"vision_start_token_id": 248053, "vision_end_token_id": 248054,
                "image_token_id": 248056, "video_token_id": 248057}
_PADDLE_IDS = {"vision_start_token_id": 101305, "vision_end_token_id": 101306,
               "image_token_id": 100295, "video_token_id": 100296}
_GLM_IDS = {"image_start_token_id": 151339, "image_end_token_id": 151340,
            "video_start_token_id": 151341, "video_end_token_id": 151342,
            "image_token_id": 151343, "video_token_id": 151344}
FAMILY_CONFIG = {
    "glm4v": {**_GLM_IDS, "spatial_merge_size": 2},
    "qwen2_5_vl": {**_QWEN_IDS, "spatial_merge_size": 2, "tokens_per_second": 2},
    "qwen2_vl": {**_QWEN_IDS, "spatial_merge_size": 2},
    "qwen3_vl": {**_QWEN_IDS, "spatial_merge_size": 2},
    "qwen3_5": {**_QWEN3_5_IDS, "spatial_merge_size": 2},
    "glm46v": {**_GLM_IDS, "video_start_token_id": 151361, "video_end_token_id": 151362,
               "spatial_merge_size": 2},
    "paddleocr_vl": {**_PADDLE_IDS, "spatial_merge_size": 2},
    "ernie4_5_vl_moe": {"image_start_token_id": 101304, "image_end_token_id": 101305,
                        "image_token_id": 100295, "video_start_token_id": 101306,
                        "video_end_token_id": 101307, "video_token_id": 103367,
                        "spatial_merge_size": 2, "temporal_merge_size": 2},
    # Qwen/Qwen2.5-Omni-7B's thinker.
    "qwen2_5_omni": {**_QWEN_IDS, "audio_token_id": 151646, "audio_start_token_id": 151647,
                     "audio_end_token_id": 151648, "spatial_merge_size": 2,
                     "position_id_per_seconds": 25, "seconds_per_chunk": 2},
    # Qwen/Qwen3-Omni-30B-A3B-Instruct's thinker.
    "qwen3_omni": {**_QWEN_IDS, "audio_token_id": 151675, "audio_start_token_id": 151669,
                   "audio_end_token_id": 151670, "spatial_merge_size": 2,
                   "position_id_per_seconds": 13},
    # Qwen3.5-MoE: Qwen3.5's ids (transformers 5.23's configuration defaults).
    "qwen3_5_moe": {**_QWEN3_5_IDS, "spatial_merge_size": 2},
    # zai-org/GLM-Image (transformers 5.23's configuration defaults).
    "glm_image": {"image_start_token_id": 16384, "image_end_token_id": 16385,
                  "image_token_id": 167855, "spatial_merge_size": 1},
    "qwen4_exp": {**_QWEN3_5_IDS, "spatial_merge_size": 2},
    "cosmos3_omni": {**_QWEN_IDS, "spatial_merge_size": 2},
    "cosmos3_edge": {"vision_start_token_id": 20, "vision_end_token_id": 21,
                     "image_token_id": 19, "video_token_id": 18, "spatial_merge_size": 2},
    # The vLLM families on rules of their own (their rows' preset ids; merge 2 for Isaac,
    # whose class default is 1): vLLM's positions read no marker, so theirs are MARKERS.
    "openpangu_vl": {"image_token_id": 46005, "video_token_id": 144208, "spatial_merge_size": 2},
    "isaac": {"image_token_id": 151655, "spatial_merge_size": 2},
    "keye": {"image_token_id": 151655, "video_token_id": 151656, "spatial_merge_size": 2},
    "cohere_compass": {"vision_start_token_id": 255028, "vision_end_token_id": 255029,
                       "image_token_id": 255031, "video_token_id": 255032,
                       "spatial_merge_size": 2},
    # tencent/HunyuanOCR: four XD-RoPE axes (rope_scaling.xdrope_section [16, 16, 16, 16]);
    # its <image_start> and <image_end> (im_start_id, im_end_id) are read by no position rule.
    "hunyuan_vl": {"image_token_id": 120120, "spatial_merge_size": 2,
                   "mrope_section": [16, 16, 16, 16]},
}
# The text ids around those families' blocks (<vision_start>, <vision_end>): Keye's are the
# Qwen3 tokenizer's; openPangu-VL's stand-ins (no installed file gives them).
MARKERS = {"openpangu_vl": {"vision_start_token_id": 144206, "vision_end_token_id": 144207},
           "keye": {"vision_start_token_id": 151652, "vision_end_token_id": 151653}}
# Ids a prompt carries but no config key names: HunYuan-VL's image begin and end tokens.
BRACKETS = {"hunyuan_vl": (120118, 120119)}
# How each family's processor lays a block out: Qwen2-VL's one run of pads, Qwen3-VL's
# timestamped frames, GLM-4.1V's bracketed frames, ERNIE-4.5-VL's one bracketed run (its
# timestamps are drawn on the frames); PaddleOCR-VL's processor takes images only.
LAYOUT = {"qwen2_vl": "qwen2", "qwen2_5_vl": "qwen2", "paddleocr_vl": "qwen2",
          "qwen3_vl": "qwen3", "qwen3_5": "qwen3", "qwen3_5_moe": "qwen3", "qwen4_exp": "qwen3",
          "cosmos3_omni": "qwen3", "cosmos3_edge": "qwen3", "glm4v": "glm", "glm46v": "glm",
          "qwen2_5_omni": "qwen2", "qwen3_omni": "qwen2", "ernie4_5_vl_moe": "ernie",
          "openpangu_vl": "pangu", "isaac": "runs", "keye": "qwen2",
          "cohere_compass": "qwen3", "hunyuan_vl": "hunyuan"}
# openPangu-VL: a video's frames are separated by <vision_end><vision_start> inside one pair;
# Isaac: an image is its pads alone.
IMAGES_ONLY = ("paddleocr_vl", "isaac", "hunyuan_vl")
# Families with audio blocks (<audio_start> pads <audio_end>) and, when a batch's
# use_audio_in_video is set, videos with their audio interleaved (Qwen2.5-Omni: by 2-second
# chunk; Qwen3-Omni: token by token by time).
AUDIO = ("qwen2_5_omni", "qwen3_omni")
MM_TYPE = {"image": 1, "video": 2, "audio": 3}
PAD_ID = 151643  # <|endoftext|>, the Qwen tokenizers' pad; GLM's is 151329, also text
# Ordinary vocabulary: no special token of the family (PaddleOCR-VL's and ERNIE's vocabulary has
# its special tokens from 100272 on).
TEXT_IDS = {"paddleocr_vl": (0, 100000), "ernie4_5_vl_moe": (0, 100000),
            "glm_image": (16386, 160000), "cosmos3_edge": (1000, 100000),
            "openpangu_vl": (50000, 144000), "hunyuan_vl": (0, 120000)}
DEFAULT_TEXT_IDS = (0, 151000)

# Video sampling rates: seconds per temporal grid is temporal_patch_size (2) / fps, so fps above
# 2 gives fractional seconds (2/3 s, 0.4 s, 1/3 s, 0.8 s, 0.25 s): what transformers PR #48669
# changed for Qwen2.5-VL.
FPS = (0.5, 1.0, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)


def _grid(rng, family, video):
    """(t, h, w) before the 2x2 merge: h, w even; images have t = 1, videos a multiple of the
    family's temporal merge."""
    merge = FAMILY_CONFIG[family].get("temporal_merge_size", 1)
    t = merge * int(rng.integers(1, 6)) if video else 1
    return t, 2 * int(rng.integers(1, 9)), 2 * int(rng.integers(1, 9))


def _text(rng, family, n):
    return [int(x) for x in rng.integers(*TEXT_IDS.get(family, DEFAULT_TEXT_IDS), size=n)]


def _placeholder(family, video, version, types):
    """vLLM's placeholder range of a block, (start, length): its media tokens; a Qwen3-VL
    video's covers its frames (timestamps and inner pairs too), inside the outer pair if any."""
    if LAYOUT[family] == "qwen3" and video:
        outer = int(version >= (5, 10))
        return outer, len(types) - 2 * outer
    media = [i for i, t in enumerate(types) if t]
    return media[0], media[-1] + 1 - media[0]


def _image_tokens(family, grid, ids, extra=True):
    """(token ids, mm types) of one image block. HunYuan-VL: <image_start>, image tokens for
    h/2 rows of w/2 + 1 (a row separator) and, when the processor's cat_extra_token (`extra`),
    a begin and an end token, then <image_end>."""
    if LAYOUT[family] == "hunyuan":
        start, end = BRACKETS[family]
        pads = grid[1] // 2 * (grid[2] // 2 + 1) + (2 if extra else 0)
        return [start] + [ids["image_token_id"]] * pads + [end], [0] + [1] * pads + [0]
    pads = grid[0] * grid[1] * grid[2] // 4
    if LAYOUT[family] == "runs":
        return [ids["image_token_id"]] * pads, [1] * pads
    if LAYOUT[family] in ("glm", "ernie"):
        return ([ids["image_start_token_id"]] + [ids["image_token_id"]] * pads +
                [ids["image_end_token_id"]], [0] + [1] * pads + [0])
    return ([ids["vision_start_token_id"]] + [ids["image_token_id"]] * pads +
            [ids["vision_end_token_id"]], [0] + [1] * pads + [0])


def _video_tokens(rng, family, grid, ids, version):
    """(token ids, mm types) of one video block in the processor layout of `version`."""
    t, h, w = grid
    frame = h * w // 4
    tokens, types = [], []
    if LAYOUT[family] == "qwen2":  # one block of t*h*w/4 pads
        return ([ids["vision_start_token_id"]] + [ids["video_token_id"]] * (t * frame) +
                [ids["vision_end_token_id"]], [0] + [2] * (t * frame) + [0])
    if LAYOUT[family] == "pangu":  # one pair around the frames, <ve><vs> between them
        tokens, types = [ids["vision_start_token_id"]], [0]
        for k in range(t):
            if k:
                tokens += [ids["vision_end_token_id"], ids["vision_start_token_id"]]
                types += [0, 0]
            tokens, types = tokens + [ids["video_token_id"]] * frame, types + [2] * frame
        return tokens + [ids["vision_end_token_id"]], types + [0]
    if LAYOUT[family] == "ernie":  # t / temporal_merge_size frames of pads
        pads = t * frame // ids["temporal_merge_size"]
        return ([ids["video_start_token_id"]] + [ids["video_token_id"]] * pads +
                [ids["video_end_token_id"]], [0] + [2] * pads + [0])
    if LAYOUT[family] == "qwen3":
        # Per temporal grid: "<x.y seconds>" (text), <vs>, pads, <ve>. transformers >= 5.10's
        # processor keeps the chat template's outer <vs> ... <ve> around the frames.
        outer = version >= (5, 10)
        if outer:
            tokens, types = [ids["vision_start_token_id"]], [0]
        for _ in range(t):
            stamp = int(rng.integers(3, 7))
            tokens += _text(rng, family, stamp) + [ids["vision_start_token_id"]]
            tokens += [ids["video_token_id"]] * frame + [ids["vision_end_token_id"]]
            types += [0] * (stamp + 1) + [2] * frame + [0]
        if outer:
            tokens, types = tokens + [ids["vision_end_token_id"]], types + [0]
        return tokens, types
    # GLM-4.1V: <|begin_of_video|>, per temporal grid <|begin_of_image|>, h*w/4 <|image|>,
    # <|end_of_image|>, str(int(timestamp)) (GLM-4.6V: f"{timestamp:.1f} seconds"); then
    # <|end_of_video|>. Frames are <|image|> ids.
    tokens, types = [ids["video_start_token_id"]], [0]
    for k in range(t):
        stamp = len(str(k)) if family == "glm4v" else int(rng.integers(3, 7))
        tokens += [ids["image_start_token_id"]] + [ids["image_token_id"]] * frame
        tokens += [ids["image_end_token_id"]] + _text(rng, family, stamp)
        types += [0] + [2] * frame + [0] * (1 + stamp)
    return tokens + [ids["video_end_token_id"]], types + [0]


def _audio_length(rng, family):
    """(feature frames, tokens) of one audio: Qwen2.5-Omni's encoder's two stride-2 stages;
    Qwen3-Omni's 13 per 100 frames, the rest strided three times
    (_get_feat_extract_output_lengths, n_window 50)."""
    frames = int(rng.integers(8, 600))
    if family == "qwen3_omni":
        rest = (frames % 100 - 1) // 2 + 1
        return frames, ((rest - 1) // 2 + 1 - 1) // 2 + 1 + frames // 100 * 13
    return frames, ((frames - 1) // 2 + 1 - 2) // 2 + 1


def _chunks(indices, per_chunk):
    """Qwen2_5OmniProcessor.get_chunked_index: lengths of the runs of `indices` (ascending)
    below per_chunk, 2 * per_chunk, ..."""
    bounds = [0] + [i for i in range(1, len(indices))
                    if indices[i] // per_chunk > indices[i - 1] // per_chunk] + [len(indices)]
    return [b - a for a, b in zip(bounds, bounds[1:])]


def _video_with_audio(family, grid, seconds, audio_tokens, ids):
    """Qwen2_5OmniProcessor.replace_video_with_audio_token inside <vision_start> ...
    <vision_end>: per 2-second chunk the video's tokens, then the audio's;
    Qwen3OmniMoeProcessor's: token by token, a video token (at its grid's time in positions)
    before an audio token (at its index) of the same time or later."""
    t, h, w = grid
    frame = h * w // 4
    if family == "qwen3_omni":
        video = np.repeat(np.arange(t), frame) * seconds * ids["position_id_per_seconds"]
        tokens, types, v, a = [ids["vision_start_token_id"], ids["audio_start_token_id"]], [0, 0], 0, 0
        while v < len(video) or a < audio_tokens:
            if a == audio_tokens or (v < len(video) and video[v] <= a):
                tokens, types, v = tokens + [ids["video_token_id"]], types + [2], v + 1
            else:
                tokens, types, a = tokens + [ids["audio_token_id"]], types + [3], a + 1
        return (tokens + [ids["audio_end_token_id"], ids["vision_end_token_id"]],
                types + [0, 0])
    per_chunk = int(ids["position_id_per_seconds"] * ids["seconds_per_chunk"])
    video = _chunks(np.repeat(np.arange(t), frame) * seconds * ids["position_id_per_seconds"],
                    per_chunk)
    audio = _chunks(np.arange(audio_tokens), per_chunk)
    tokens, types = [ids["vision_start_token_id"], ids["audio_start_token_id"]], [0, 0]
    for j in range(max(len(video), len(audio))):
        if j < len(video):
            tokens, types = tokens + [ids["video_token_id"]] * video[j], types + [2] * video[j]
        if j < len(audio):
            tokens, types = tokens + [ids["audio_token_id"]] * audio[j], types + [3] * audio[j]
    return (tokens + [ids["audio_end_token_id"], ids["vision_end_token_id"]],
            types + [0, 0])


def random_prompt(rng, family, version):
    """One batch of 1-4 rows; each row text runs with 0-3 images or videos (Omni: or audios;
    or text only). Rows are padded to the longest, left or right (one side per batch)."""
    ids = {**FAMILY_CONFIG[family], **MARKERS.get(family, {})}
    rows, images, videos, seconds, layouts, features = [], [], [], [], [], []
    audios = []
    in_video = family in AUDIO and bool(rng.integers(0, 2))  # use_audio_in_video
    extra = family not in BRACKETS or bool(rng.integers(0, 2))  # HunYuan's cat_extra_token
    batch = int(rng.integers(1, 5))
    for _ in range(batch):
        n_text = int(rng.integers(1, 12))
        tokens, types, layout = _text(rng, family, n_text), [0] * n_text, [f"T{n_text}"]
        row_features = []
        for _ in range(int(rng.integers(0, 4))):
            if family in AUDIO:
                kind = ("image", "video", "audio")[int(rng.integers(0, 3))]
            else:
                kind = ("video" if bool(rng.integers(0, 2)) and family not in IMAGES_ONLY
                        else "image")
            video = kind == "video"
            grid = _grid(rng, family, video)
            if kind == "audio":
                frames, n_audio = _audio_length(rng, family)
                audios.append(frames)
                block = ([ids["audio_start_token_id"]] + [ids["audio_token_id"]] * n_audio +
                         [ids["audio_end_token_id"]])
                block_types = [0] + [3] * n_audio + [0]
                layout.append(f"A{frames}")
            elif video:
                fps = float(FPS[rng.integers(0, len(FPS))])
                if in_video:
                    frames, n_audio = _audio_length(rng, family)
                    audios.append(frames)
                    block, block_types = _video_with_audio(family, grid, 2.0 / fps, n_audio,
                                                           ids)
                    layout.append("V%dx%dx%d@%gfps+A%d" % (*grid, fps, frames))
                else:
                    block, block_types = _video_tokens(rng, family, grid, ids, version)
                    layout.append("V%dx%dx%d@%gfps" % (*grid, fps))
                videos.append(grid)
                seconds.append(2.0 / fps)
            else:
                block, block_types = _image_tokens(family, grid, ids, extra)
                images.append(grid)
                layout.append("I%dx%dx%d" % grid)
            start, length = _placeholder(family, video, version, block_types)
            row_features.append((kind, len(tokens) + start, length,
                                 grid, np.float32(seconds[-1]) if video else None))
            n_text = int(rng.integers(0, 8))
            tokens += block + _text(rng, family, n_text)
            types += block_types + [0] * n_text
            if n_text:
                layout.append(f"T{n_text}")
        rows.append((tokens, types))
        features.append(row_features)
        layouts.append(" ".join(layout))
    length = max(len(t) for t, _ in rows)
    left = bool(rng.integers(0, 2))
    input_ids = np.full((batch, length), PAD_ID, dtype=np.int64)
    mask = np.zeros((batch, length), dtype=np.int64)
    mm_types = np.zeros((batch, length), dtype=np.int64)
    for b, (tokens, types) in enumerate(rows):
        cols = slice(length - len(tokens), length) if left else slice(0, len(tokens))
        input_ids[b, cols], mask[b, cols], mm_types[b, cols] = tokens, 1, types
    grids = lambda g: np.array(g, dtype=np.int64).reshape(-1, 3) if g else None
    return {
        "input_ids": input_ids, "attention_mask": mask, "mm_token_type_ids": mm_types,
        "image_grid_thw": grids(images), "video_grid_thw": grids(videos),
        # The processor's list of Python floats becomes a float32 tensor (Omni's
        # video_second_per_grid, the thinker's second_per_grids, too).
        "second_per_grid_ts": (np.array(seconds, dtype=np.float32)
                               if family in ("qwen2_5_vl",) + AUDIO and seconds else None),
        "audio_seqlens": np.array(audios, dtype=np.int64) if audios else None,
        "use_audio_in_video": in_video,
        "layout": ("left " if left else "right ") + " | ".join(layouts),
        "features": features,
    }


def _glm_image_prompt(rng, family):
    """GlmImageProcessor's batch: every row the same number of source images (0: text to
    image, with two target grids; 1-2: image to image, with one), each row text, its sources
    (<image_start>, h*w pads, <image_end>) and text, then the target's text and the
    <image_start> the generation continues from. image_grid_thw lists per row its sources'
    grids, then its targets'; images_per_sample counts both."""
    ids = FAMILY_CONFIG[family]
    batch, sources = int(rng.integers(1, 5)), int(rng.integers(0, 3))
    rows, grids, layouts = [], [], []
    for _ in range(batch):
        n_text = int(rng.integers(1, 12))
        tokens, layout = _text(rng, family, n_text), [f"T{n_text}"]
        for _ in range(sources):
            h, w = int(rng.integers(1, 9)), int(rng.integers(1, 9))
            grids.append((1, h, w))
            n_text = int(rng.integers(0, 8))
            tokens += ([ids["image_start_token_id"]] + [ids["image_token_id"]] * (h * w) +
                       [ids["image_end_token_id"]] + _text(rng, family, n_text))
            layout += [f"I1x{h}x{w}"] + ([f"T{n_text}"] if n_text else [])
        h, w = 2 * int(rng.integers(1, 9)), 2 * int(rng.integers(1, 9))
        targets = [(1, h, w)] if sources else [(1, h, w), (1, h // 2, w // 2)]
        grids += targets
        n_text = int(rng.integers(1, 6))
        tokens += _text(rng, family, n_text) + [ids["image_start_token_id"]]
        layout += [f"T{n_text}", "S"] + ["G%dx%dx%d" % g for g in targets]
        rows.append(tokens)
        layouts.append(" ".join(layout))
    length = max(len(t) for t in rows)
    left = bool(rng.integers(0, 2))
    input_ids = np.full((batch, length), PAD_ID, dtype=np.int64)
    mask = np.zeros((batch, length), dtype=np.int64)
    for b, tokens in enumerate(rows):
        cols = slice(length - len(tokens), length) if left else slice(0, len(tokens))
        input_ids[b, cols], mask[b, cols] = tokens, 1
    return {
        "input_ids": input_ids, "attention_mask": mask,
        "mm_token_type_ids": (input_ids == ids["image_token_id"]).astype(np.int64),
        "image_grid_thw": np.array(grids, dtype=np.int64), "video_grid_thw": None,
        "images_per_sample": np.full(batch, sources + (1 if sources else 2), dtype=np.int64),
        "second_per_grid_ts": None, "layout": ("left " if left else "right ") + " | ".join(layouts),
        "features": None,
    }


def random_prompts(family, version, count, seed):
    """`count` prompts with media (a batch of text-only rows is not given to get_rope_index
    by the models), the same for the same arguments."""
    rng = np.random.default_rng([seed, list(FAMILY_CONFIG).index(family), *version])
    prompts = []
    while len(prompts) < count:
        if family == "glm_image":
            prompts.append(_glm_image_prompt(rng, family))
            continue
        prompt = random_prompt(rng, family, version)
        if prompt["image_grid_thw"] is not None or prompt["video_grid_thw"] is not None:
            prompts.append(prompt)
    return prompts
