"""Runs single requests through an installed vLLM's own get_mrope_input_positions(input_tokens,
mm_features), in the process the test starts for it (its directory first on sys.path).

stdin: pickle {"families": {family: (config, [requests])}}, a request being
(input_tokens, [(modality, offset, length, (t, h, w), second_per_grid_ts or None)]).
stdout: pickle {"version", "results": {family: [{positions, delta, decode} or {error}]},
"sources"}; decode: the positions of DECODE_STEPS generated tokens, from vLLM's own
MRotaryEmbedding.get_next_input_positions(delta, context_len, seq_len).

The model classes' methods are called unbound on a stand-in `self` with the config attributes
they read; the features are plain holders of the fields vLLM reads (MultiModalFeatureSpec's
modality, data[key].data) with vLLM's own PlaceholderRange (offset, length, and is_embed: the
placeholder's image and video tokens, which Keye-VL-1.5 splits a video's frames by).
"""
import importlib
import inspect
import pickle
import sys
import types

import numpy as np
import torch
import vllm
from vllm.model_executor.layers.rotary_embedding.mrope import MRotaryEmbedding
from vllm.multimodal.inputs import PlaceholderRange

import stand_in

DECODE_STEPS = 4

MODEL_CLASSES = {
    "qwen2_5_vl": "qwen2_5_vl.Qwen2_5_VLForConditionalGeneration",
    "qwen3_vl": "qwen3_vl.Qwen3VLForConditionalGeneration",
    "cosmos3_omni": "cosmos3.Cosmos3ForConditionalGeneration",
    "cosmos3_edge": "cosmos3_edge.Cosmos3EdgeForConditionalGeneration",
    "cohere_compass": "cohere_compass.CohereCompassForConditionalGeneration",
    "interns1_pro": "interns1_pro.InternS1ProForConditionalGeneration",
    "opencua": "opencua.OpenCUAForConditionalGeneration",
    "keye_vl1_5": "keye_vl1_5.KeyeVL1_5ForConditionalGeneration",
    "openpangu_vl": "openpangu_vl.OpenPanguVLForConditionalGeneration",
    "isaac": "isaac.IsaacForConditionalGeneration",
    "keye": "keye.KeyeForConditionalGeneration",
}
# Classes whose video item holds its frames' grids as rows ([t, 3] of [1, h, w], vLLM's
# flat_from_sizes field); [[t, h, w]] is split into the same rows.
GRID_ROWS = ("keye_vl1_5",)


def _config(values):
    vision = types.SimpleNamespace(
        **{k: v for k, v in values.items() if k in ("spatial_merge_size", "tokens_per_second")})
    vision.pixel_shuffle_scale_factor = values["spatial_merge_size"]  # Isaac's name for it
    ids = {k: v for k, v in values.items() if k.endswith("_token_id")}
    return types.SimpleNamespace(vision_config=vision, **ids)


def _feature(tokens, media_ids, grid_rows, modality, offset, length, grid, seconds):
    grid = [list(grid)] if grid_rows and modality == "video" else grid
    data = {f"{modality}_grid_thw": types.SimpleNamespace(data=torch.tensor(grid))}
    if seconds is not None:
        data["second_per_grid_ts"] = types.SimpleNamespace(data=torch.tensor(seconds))
    is_embed = torch.from_numpy(np.isin(tokens[offset:offset + length], media_ids))
    return types.SimpleNamespace(
        modality=modality, data=data,
        mm_position=PlaceholderRange(offset=offset, length=length, is_embed=is_embed))


def run(family, config, requests):
    module, _, name = MODEL_CLASSES[family].rpartition(".")
    cls = getattr(importlib.import_module("vllm.model_executor.models." + module), name)
    this = stand_in.Self(cls, _config(config))
    media_ids = [config[k] for k in ("image_token_id", "video_token_id") if k in config]
    results = []
    for tokens, features in requests:
        features = [_feature(np.array(tokens), media_ids, family in GRID_ROWS, *f)
                    for f in features]
        try:
            positions, delta = cls.get_mrope_input_positions(this, list(tokens), features)
        except Exception as e:  # the reference's own failure is a result too
            results.append({"error": f"{type(e).__name__}: {e}"})
            continue
        n = len(tokens)
        decode = MRotaryEmbedding.get_next_input_positions(delta, n, n + DECODE_STEPS)
        results.append({"positions": positions.numpy(), "delta": delta,
                        "decode": np.array(decode, dtype=np.int64)})
    return results, source_line(cls.get_mrope_input_positions)


def source_line(function):
    """'path:line' of `function` in the installed vLLM (the reference a result comes from)."""
    source = inspect.getsourcefile(function)
    return f"{source.split('targets/')[-1]}:{inspect.getsourcelines(function)[1]}"


def serve(run):
    """The runners' protocol: a request on stdin, `run(family, config, requests)` ->
    (results, source line) per family, the response on stdout."""
    request = pickle.load(sys.stdin.buffer)
    response = {"version": vllm.__version__, "results": {}, "sources": {}}
    for family, (config, requests) in request["families"].items():
        response["results"][family], response["sources"][family] = run(family, config, requests)
    pickle.dump(response, sys.stdout.buffer)


if __name__ == "__main__":
    serve(run)
