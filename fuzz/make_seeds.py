#!/usr/bin/env python3
"""Writes the fuzz seed corpora under fuzz/corpus/ from the golden position cases.

  fuzz/make_seeds.py            (from the repository root or anywhere; deterministic)

  fuzz/corpus/positions_fuzzer/<model>_<case>     each golden case of at most MAX_SEED_TOKENS
                                                   real tokens in the byte format of
                                                   fuzz/positions_fuzzer.cc (batch mode)
  fuzz/corpus/request_json_fuzzer/<model>_<case>.json
                                                   each golden case without its outputs, if
                                                   under MAX_JSON_SEED bytes
  fuzz/corpus/service_request_fuzzer/...           the same JSON behind a preset/encoding
                                                   header, plus TEXTPROTO_REQUESTS as text and
                                                   as binary (protoc --encode) for every preset
  fuzz/corpus/config_json_fuzzer/config_N.json     CONFIGS: HF config.json files of each family
                                                   and rope_scaling variants
  fuzz/corpus/rope_params_fuzzer/type_N            one RopeParameters per scaling method
  fuzz/corpus/kernel_args_fuzzer/...               KERNEL_SEEDS: valid kernel launches

Text token ids become one id (their values do not matter to positions); everything else,
including seconds per grid as float32 and left padding, is kept.
"""

import json
import pathlib
import struct
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
CORPUS = ROOT / "fuzz" / "corpus"
MAX_JSON_SEED = 16 << 10
MAX_SEED_TOKENS = 1 << 13  # kMaxBuiltTokens of positions_fuzzer.cc

# Preset bytes: indices into PresetNames() (mrope/positions/model_family.h), which the fuzzers read.
PRESETS = {"qwen2_vl": 0, "qwen2_5_vl": 2, "qwen2_5_vl_vllm": 3, "qwen3_vl": 4,
           "qwen2_5_omni": 5, "qwen3_omni": 6, "glm4v": 7}
FLAG_AUDIO_IN_VIDEO = 1 << 6
SECONDS = [0.2, 0.25, 1 / 3, 0.4, 0.5, 0.7, 0.9, 1.0, 4 / 3, 1.4, 1.5, 1.8, 2.0, 2.5, 0.0, 13.0,
           25.0, 1e-3]
OP_TEXT_RUN, OP_VISION_START, OP_VISION_END = 1, 2, 3
OP_IMAGE_RUN, OP_VIDEO_RUN = 4, 5
OP_AUDIO_START, OP_AUDIO_END, OP_AUDIO_RUN = 6, 7, 8
OP_VIDEO_START, OP_VIDEO_END = 15, 15 | 1 << 4  # op 15; arg bit 0 picks the end marker
WINDOW_CHOICES = bytes(range(7, 7 + 48))


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def length(n):
    assert 0 <= n < 1 << 15, n
    return bytes([n]) if n < 128 else bytes([128 + (n >> 8), n & 255])


def wide(n):
    if 0 <= n < 128:
        return bytes([n])
    if 0 <= n < 127 << 8:
        return bytes([128 + (n >> 8), n & 255])
    return b"\xff" + struct.pack("<q", n)


def seconds(x):
    for i, s in enumerate(SECONDS):
        if f32(s) == f32(x):
            return bytes([i])
    return b"\xff" + struct.pack("<f", x)


def runs(tokens, ids):
    """Run-length ops of one row's real tokens."""
    ops = []
    # GLM's image_start/image_end are mrope's vision markers.
    special = {ids.get("vision_start_token_id", ids.get("image_start_token_id")): OP_VISION_START,
               ids.get("vision_end_token_id", ids.get("image_end_token_id")): OP_VISION_END,
               ids.get("audio_start_token_id"): OP_AUDIO_START,
               ids.get("audio_end_token_id"): OP_AUDIO_END,
               ids.get("video_start_token_id"): OP_VIDEO_START,
               ids.get("video_end_token_id"): OP_VIDEO_END}
    run_ops = {ids["image_token_id"]: OP_IMAGE_RUN, ids["video_token_id"]: OP_VIDEO_RUN,
               ids.get("audio_token_id"): OP_AUDIO_RUN}
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t in special:
            ops.append(bytes([special[t]]))
            i += 1
            continue
        j = i
        if t in run_ops:
            while j < len(tokens) and tokens[j] == t:
                j += 1
            op = run_ops[t]
        else:
            while j < len(tokens) and tokens[j] not in special and tokens[j] not in run_ops:
                j += 1
            op = OP_TEXT_RUN
        n = j - i
        while n > 0:
            chunk = min(n, (1 << 15) - 1)
            ops.append(bytes([op]) + length(chunk))
            n -= chunk
        i = j
    return ops


def positions_seed(case):
    inputs, config = case["inputs"], case["config"]
    out = bytearray([PRESETS[case["model"]]])
    out.append(FLAG_AUDIO_IN_VIDEO if inputs.get("use_audio_in_video") else 0)
    for key in ("image_grid_thw", "video_grid_thw"):
        grids = inputs.get(key) or []
        if len(grids) >= 16:
            return None
        out.append(len(grids))
        for grid in grids:
            for v in grid:
                out += wide(v)
    secs = inputs.get("second_per_grid_ts") or inputs.get("video_second_per_grid") or []
    if len(secs) >= 17:
        return None
    out.append(len(secs))
    for s in secs:
        out += seconds(s)
    audio = inputs.get("audio_feature_lengths") or []
    if len(audio) >= 16:
        return None
    out.append(len(audio))
    for a in audio:
        out += wide(a)
    rows = inputs["input_ids"]
    masks = inputs.get("attention_mask") or [[1] * len(r) for r in rows]
    if len(rows) > 4 or sum(map(sum, masks)) > MAX_SEED_TOKENS:
        return None
    out.append(len(rows) - 1)
    for row, mask in zip(rows, masks):
        if any(m == 0 for m in mask[mask.index(1):]):
            return None  # holes: not left padding
        ops = runs([t for t, m in zip(row, mask) if m == 1], config)
        out += length(len(ops)) + b"".join(ops)
    return bytes(out) + WINDOW_CHOICES


# service_request_fuzzer: preset byte (PresetNames() order), encoding byte (0 JSON, 1 text, 2 binary).
SERVICE_PRESETS = ["qwen2_vl", "qwen2_5_vl", "qwen2_5_vl_hf", "qwen2_5_vl_vllm", "qwen3_vl",
                   "qwen2_5_omni", "qwen3_omni", "glm4v", "glm4v_moe"]
GOLDEN_TO_SERVICE = {"qwen2_vl": 0, "qwen2_5_vl": 2, "qwen2_5_vl_vllm": 3, "qwen3_vl": 4,
                     "qwen2_5_omni": 5, "qwen3_omni": 6, "glm4v": 7}
VS, VE, IMG, VID = 151652, 151653, 151655, 151656
TEXTPROTO_REQUESTS = [
    f"inputs {{ input_ids {{ ids: [1, 2, {VS}, {IMG}, {VE}, 3] }} "
    "image_grid_thw { t: 1 h: 2 w: 2 } } options { decode_steps: 3 cos_sin: true }",
    f"inputs {{ input_ids {{ ids: [7, {VS}, {VID}, {VID}, {VE}, 8] }} "
    f"input_ids {{ ids: [151643, 151643, 5, 6, 7, 8] }} "
    "attention_mask { ids: [1, 1, 1, 1, 1, 1] } attention_mask { ids: [0, 0, 1, 1, 1, 1] } "
    "video_grid_thw { t: 2 h: 2 w: 2 } } options { layout: PACKED output_type: INT32 }",
    "sequences { spans { kind: TEXT text_tokens: 5 } spans { kind: IMAGE grid { t: 1 h: 4 "
    "w: 4 } } spans { kind: TEXT text_tokens: 2 } } sequences { spans { kind: VIDEO grid { "
    "t: 2 h: 2 w: 2 } seconds_per_grid: 0.5 } } options { window_begin: 2 window_end: 12 "
    "decode_steps: 2 }",
    "sequences { spans { kind: AUDIO audio_tokens: 10 } spans { kind: AUDIO_IN_VIDEO grid { "
    "t: 2 h: 2 w: 2 } seconds_per_grid: 2 audio_tokens: 30 } spans { kind: IMAGE grid { t: 1 "
    "h: 2 w: 2 } open: true } } options { output_type: FLOAT32 cos_sin: true }",
]

# config_json_fuzzer: 8-byte sequence length, then an HF config.json.
QWEN_IDS = {"image_token_id": IMG, "video_token_id": VID, "vision_start_token_id": VS,
            "vision_end_token_id": VE}
OMNI_IDS = {"image_token_index": IMG, "video_token_index": VID, "vision_start_token_id": VS,
            "vision_end_token_id": VE, "audio_token_index": 151646,
            "audio_start_token_id": 151647, "audio_end_token_id": 151648}
MROPE_2 = {"type": "mrope", "mrope_section": [16, 24, 24]}
MROPE_3 = {"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": True}
TEXT_2 = {"hidden_size": 3584, "num_attention_heads": 28, "rope_theta": 1e6,
          "rope_scaling": MROPE_2}
CONFIGS = [
    {"model_type": "qwen2_vl", **QWEN_IDS, "vision_config": {"spatial_merge_size": 2}, **TEXT_2},
    {"model_type": "qwen2_5_vl", **QWEN_IDS,
     "vision_config": {"spatial_merge_size": 2, "tokens_per_second": 2}, **TEXT_2},
    {"model_type": "qwen3_vl", **QWEN_IDS,
     "text_config": {"head_dim": 128, "rope_theta": 5e6, "rope_scaling": MROPE_3}},
    {"model_type": "qwen2_5_omni", "thinker_config": {
        **OMNI_IDS, "position_id_per_seconds": 25, "seconds_per_chunk": 2,
        "vision_config": {"spatial_merge_size": 2}, "text_config": TEXT_2}},
    {"model_type": "qwen3_omni_moe_thinker", **OMNI_IDS, "position_id_per_seconds": 13,
     "text_config": {"head_dim": 128, "rope_theta": 1e6, "rope_scaling": MROPE_3}},
    {"rope_theta": 10000, "head_dim": 64, "rope_scaling": {
        "rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 4096}},
    {"rope_theta": 500000, "head_dim": 128, "rope_scaling": {
        "rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4,
        "original_max_position_embeddings": 8192}},
    {"rope_theta": 10000, "head_dim": 16, "max_position_embeddings": 131072, "rope_scaling": {
        "rope_type": "longrope", "short_factor": [1.0] * 8, "long_factor": [2.5] * 8,
        "original_max_position_embeddings": 4096}},
    {"rope_theta": 10000, "hidden_size": 4096, "num_attention_heads": 32,
     "partial_rotary_factor": 0.5, "max_position_embeddings": 2048,
     "rope_scaling": {"type": "dynamic", "factor": 2}},
    {"rope_parameters": {"rope_type": "linear", "factor": 2, "rope_theta": 1e4}, "head_dim": 32},
]

# rope_params_fuzzer: see its header comment (indices into its kReals).
REAL_INDEX = {0.0: 0, 1.0: 1, 2.0: 2, 4.0: 3, 32.0: 5, 1e4: 9, 1e6: 10}
SECTIONS_128 = bytes([3, 16, 24, 24])


def rope_seed(rope_type, factor=4.0):
    out = bytearray([64, rope_type, 64, REAL_INDEX[1e6], REAL_INDEX[factor]])
    out += wide(4096)
    out += bytes([REAL_INDEX[32.0], REAL_INDEX[1.0], 1, REAL_INDEX[1.0], REAL_INDEX[4.0],
                  REAL_INDEX[1.0]])
    out += bytes([255]) + bytes([REAL_INDEX[1.0]] * 64)  # short_factor
    out += bytes([255]) + bytes([REAL_INDEX[2.0]] * 64)  # long_factor
    out += SECTIONS_128 + bytes([rope_type % 2]) + wide(8192)
    return bytes(out)


# kernel_args_fuzzer: head_dim, rotary_dim / 2, table flag; q; k; source; axis stride; flag.
def view(base, offset, tokens, heads, token_stride, head_stride, dtype=0):
    return (bytes([base]) + wide(offset) + bytes([dtype]) + wide(tokens) + wide(heads) +
            wide(token_stride) + wide(head_stride))


# The fused kernel's part (after the M-RoPE kernel's): v; flags (1 q_out, 2 fp8 q_out, 8 k_out,
# 16 k_out in place, (flags >> 5) % 4 the norm form, 128 a cache); q_out / k_out views; cache
# base byte (2 fp8, 32 per-head scales), k offset, v - k, blocks, block size, strides.
def cache(base, k_offset, v_minus_k, blocks, block_size, block_stride, slot_stride, head_stride):
    return (bytes([base]) + wide(k_offset) + wide(v_minus_k) + wide(blocks) + wide(block_size) +
            wide(block_stride) + wide(slot_stride) + wide(head_stride))


FUSED_QKV = bytes([8, 4, 0]) + view(0, 0, 4, 1, 24, 8) + view(1, 32, 4, 1, 24, 8)

KERNEL_SEEDS = {
    # separate q [4][2][8] and k [4][2][8] buffers, planar int32 positions
    "separate": bytes([8, 4, 0]) + view(0, 0, 4, 2, 16, 8) + view(1, 256, 4, 2, 16, 8) +
    bytes([1]) + wide(4) + bytes([0]),
    # q and k of one fused qkv [4][3][8] buffer, sequence-delta positions with seq ids
    "fused_qkv": bytes([8, 4, 0]) + view(0, 0, 4, 1, 24, 8) + view(1, 32, 4, 1, 24, 8) +
    bytes([4]) + wide(1) + bytes([0]),
    # head-major bf16 q [2][3][16], a cos/sin table
    "head_major_table": bytes([16, 8, 1]) + wide(100) + wide(8) +
    view(0, 0, 3, 2, 16, 48, 1) + view(1, 4096, 3, 2, 16, 48, 1) + bytes([3]) + wide(3) +
    bytes([0]),
    # fused kernel: v of the same qkv buffer, weight norm, an fp32 NHD cache of 2 blocks of 4
    "fused_kernel_nhd": FUSED_QKV + bytes([1]) + wide(4) + bytes([0]) +
    view(1, 64, 4, 1, 24, 8) + bytes([128 + 32]) + cache(0, 0, 4096, 2, 4, 32, 8, 8),
    # fused kernel: fp8 q_out elsewhere, zero-centred norm, an fp8 HND cache, per-head scales
    "fused_kernel_fp8_hnd": FUSED_QKV + bytes([1]) + wide(4) + bytes([0]) +
    view(1, 64, 4, 1, 24, 8) + bytes([1 + 2 + 64 + 128]) + view(0, 30000, 4, 1, 8, 8) +
    cache(2 + 32, 0, 1024, 2, 4, 32, 8, 32),
    # fused kernel without a cache: k_out in place
    "fused_kernel_k_out": FUSED_QKV + bytes([1]) + wide(4) + bytes([0]) +
    view(1, 64, 4, 1, 24, 8) + bytes([8 + 16 + 32]),
}


def protoc_encode(text):
    return subprocess.run(
        ["protoc", "--encode=mrope.v1.PositionRequest", "-I", str(ROOT), "proto/mrope.proto"],
        input=text.encode(), capture_output=True, check=True, cwd=ROOT).stdout


def reset(name):
    d = CORPUS / name
    d.mkdir(parents=True, exist_ok=True)
    for f in d.iterdir():
        f.unlink()
    return d


# Inputs at the reader's edges (fuzz/FUZZING.md): deep nesting, numbers past int64 / double,
# negative and fractional ids, the bare processor output, proto3 JSON forms.
EDGE_JSON = {
    "deep_nesting": '{"outputs": ' + "[" * 100 + "]" * 100 + "}",
    "deep_nesting_ids": '{"input_ids": ' + "[" * 70 + "]" * 70 + "}",
    "huge_numbers": '{"input_ids": [[1e400, 99999999999999999999999, -9223372036854775809, '
                    '4611686018427387905, 1.5, -100]], "second_per_grid_ts": [1e999, -0.0]}',
    "processor_output": '{"input_ids": [[151652, 151655, 151655, 151655, 151655, 151653, 7]], '
                        '"attention_mask": [[1, 1, 1, 1, 1, 1, 1]], "image_grid_thw": [[1, 4, 4]], '
                        '"video_grid_thw": null, "second_per_grid_ts": null}',
    "proto3_json": '{"inputs": {"inputIds": [{"ids": ["151652", "151655", "151653"]}], '
                   '"imageGridThw": [{"t": "1", "h": 2, "w": 2}]}, "sequences": [{"spans": '
                   '[{"kind": 2, "grid": [2, 4, 4], "secondsPerGrid": 0.5}]}], '
                   '"options": {"outputType": "INT32", "layout": 1, "decodeSteps": "2"}}',
}


def main():
    dirs = {name: reset(name) for name in (
        "positions_fuzzer", "request_json_fuzzer", "service_request_fuzzer",
        "config_json_fuzzer", "rope_params_fuzzer", "kernel_args_fuzzer")}
    for path in sorted([*GOLDEN.glob("qwen*/case_*.json"), *GOLDEN.glob("glm4v/case_*.json")]):
        case = json.loads(path.read_text())
        name = f"{path.parent.name}_{path.stem}"
        seed = positions_seed(case)
        if seed is not None:
            (dirs["positions_fuzzer"] / name).write_bytes(seed)
        request = {k: v for k, v in case.items() if k != "outputs"}
        text = json.dumps(request, separators=(",", ":"))
        if len(text) <= MAX_JSON_SEED:
            (dirs["request_json_fuzzer"] / f"{name}.json").write_text(text)
            header = bytes([GOLDEN_TO_SERVICE[case["model"]], 0])
            (dirs["service_request_fuzzer"] / name).write_bytes(header + text.encode())
    for i, text in enumerate(TEXTPROTO_REQUESTS):
        binary = protoc_encode(text)
        for p, preset in enumerate(SERVICE_PRESETS):
            out = dirs["service_request_fuzzer"]
            (out / f"textproto_{i}_{preset}").write_bytes(bytes([p, 1]) + text.encode())
            (out / f"binary_{i}_{preset}").write_bytes(bytes([p, 2]) + binary)
    for i, config in enumerate(CONFIGS):
        text = json.dumps(config, separators=(",", ":"))
        (dirs["config_json_fuzzer"] / f"config_{i}.json").write_bytes(
            struct.pack("<Q", 4096 << (2 * i)) + text.encode())
    for rope_type in range(7):
        (dirs["rope_params_fuzzer"] / f"type_{rope_type}").write_bytes(rope_seed(rope_type))
    for name, seed in KERNEL_SEEDS.items():
        (dirs["kernel_args_fuzzer"] / name).write_bytes(seed)
    for name, text in EDGE_JSON.items():
        (dirs["request_json_fuzzer"] / f"edge_{name}.json").write_text(text)
        (dirs["service_request_fuzzer"] / f"edge_{name}").write_bytes(bytes([1, 0]) + text.encode())
        (dirs["config_json_fuzzer"] / f"edge_{name}.json").write_bytes(
            struct.pack("<Q", 4096) + text.encode())
    for name, d in dirs.items():
        print(f"{name}: {len(list(d.iterdir()))} seeds")


if __name__ == "__main__":
    main()
