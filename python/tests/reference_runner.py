"""Runs prompts through an installed transformers' own get_rope_index and generate() step, in
the process the test starts for that transformers (its directory first on sys.path).

stdin: pickle {"families": {family: (config, [prompts of reference_prompts.py])},
"decode_steps": K, "skip_absent": leave out the families this release lacks}.
stdout: pickle {"version", "results": {family: [{positions, deltas, decode, error}]},
"sources": {family: "path:line of get_rope_index"}}; numpy arrays, dtypes as torch gave them.

The model classes' methods are called unbound on a stand-in `self` with the config attributes
they read: no weights, no downloads.
"""
import importlib
import inspect
import pickle
import sys
import types

import numpy as np
import torch
import transformers
from transformers.generation.utils import GenerationMixin

MODEL_CLASSES = {
    "qwen2_vl": "qwen2_vl.modeling_qwen2_vl.Qwen2VLModel",
    "qwen2_5_vl": "qwen2_5_vl.modeling_qwen2_5_vl.Qwen2_5_VLModel",
    "qwen3_vl": "qwen3_vl.modeling_qwen3_vl.Qwen3VLModel",
    "glm4v": "glm4v.modeling_glm4v.Glm4vModel",
    "qwen3_5": "qwen3_5.modeling_qwen3_5.Qwen3_5Model",
    "glm46v": "glm46v.modeling_glm46v.Glm46VModel",
    "paddleocr_vl": "paddleocr_vl.modeling_paddleocr_vl.PaddleOCRVLModel",
    "qwen2_5_omni": "qwen2_5_omni.modeling_qwen2_5_omni.Qwen2_5OmniThinkerForConditionalGeneration",
    "ernie4_5_vl_moe": "ernie4_5_vl_moe.modeling_ernie4_5_vl_moe.Ernie4_5_VLMoeModel",
    "glm_image": "glm_image.modeling_glm_image.GlmImageModel",
    "qwen4_exp": "qwen4_exp.modeling_qwen4_exp.Qwen4ExpModel",
    "cosmos3_omni": "cosmos3_omni.modeling_cosmos3_omni.Cosmos3OmniModel",
    "cosmos3_edge": "cosmos3_edge.modeling_cosmos3_edge.Cosmos3EdgeModel",
}
# A class's name in earlier releases (reference_releases.py): ERNIE's in 5.0 to 5.2.
FORMER_NAMES = {"ernie4_5_vl_moe": ("Ernie4_5_VL_MoeModel",)}


class _Self:
    """`self` for an unbound call: the class's methods bound to it, a config namespace."""

    def __init__(self, cls, config):
        # The Omni thinker reads its merge size from itself (__init__ copies it there).
        self.__dict__.update(_cls=cls, config=config, rope_deltas=None,
                             spatial_merge_size=config.vision_config.spatial_merge_size)

    def __getattr__(self, name):
        cls = self.__dict__["_cls"]
        if isinstance(inspect.getattr_static(cls, name), (staticmethod, classmethod)):
            return getattr(cls, name)
        value = getattr(cls, name)
        return value.__get__(self) if hasattr(value, "__get__") else value


def _config(values):
    vision = types.SimpleNamespace(temporal_patch_size=2, tokens_per_second=2)
    ids = {}
    for key, value in values.items():
        if key in ("spatial_merge_size", "temporal_merge_size", "tokens_per_second"):
            setattr(vision, key, value)
        else:
            ids[key] = value
    return types.SimpleNamespace(vision_config=vision, text_config=types.SimpleNamespace(**ids),
                                 **ids)


def _tensor(value, dtype=None):
    return None if value is None else torch.tensor(value, dtype=dtype)


def model_class(family):
    """The class holding the family's get_rope_index, or None where the release has none
    (before transformers 4.52 it is the ...ForConditionalGeneration class's)."""
    module, _, name = MODEL_CLASSES[family].rpartition(".")
    try:
        module = importlib.import_module("transformers.models." + module)
    except ImportError:
        return None
    for candidate in (name, *FORMER_NAMES.get(family, ()),
                      name.removesuffix("Model") + "ForConditionalGeneration"):
        cls = getattr(module, candidate, None)
        if cls is not None and hasattr(cls, "get_rope_index"):
            return cls
    return None


def run(family, config, prompts, decode_steps):
    cls = model_class(family)
    this = _Self(cls, _config(config))
    accepted = inspect.signature(cls.get_rope_index).parameters
    v5_generate = "mm_token_type_ids" in accepted  # decode: each axis from its own last value
    results = []
    for prompt in prompts:
        kwargs = {key: _tensor(prompt[key]) for key in
                  ("attention_mask", "mm_token_type_ids", "image_grid_thw", "video_grid_thw")}
        kwargs["second_per_grid_ts"] = _tensor(prompt["second_per_grid_ts"], torch.float32)
        # The Omni thinker's names for them.
        kwargs["second_per_grids"] = kwargs["second_per_grid_ts"]
        kwargs["audio_seqlens"] = _tensor(prompt.get("audio_seqlens"))
        kwargs["use_audio_in_video"] = prompt.get("use_audio_in_video") or None
        kwargs["images_per_sample"] = _tensor(prompt.get("images_per_sample"))  # GLM-Image
        kwargs = {k: v for k, v in kwargs.items() if k in accepted and v is not None}
        try:
            positions, deltas = cls.get_rope_index(this, _tensor(prompt["input_ids"]), **kwargs)
        except Exception as e:  # the reference's own failure is a result too
            results.append({"error": f"{type(e).__name__}: {e}"})
            continue
        result = {"positions": positions.numpy(), "deltas": deltas.numpy()}
        if v5_generate:
            # generate(): model_kwargs["position_ids"] grows by _update_model_kwargs_for_generation
            # each step (the text row in front of these three does not change them).
            # (5.0 to 5.2's step also advances cache_position, which it requires.)
            model_kwargs = {"position_ids": positions,
                            "cache_position": torch.arange(positions.shape[-1])}
            for _ in range(decode_steps):
                model_kwargs = GenerationMixin._update_model_kwargs_for_generation(
                    this, {}, model_kwargs, num_new_tokens=1)
            result["decode"] = model_kwargs["position_ids"][..., -decode_steps:].numpy()
        cached = this.__dict__.get("_cached_decode_position_ids")
        if cached is not None and cached.dim() != 3:
            result.pop("decode", None)  # before 5.2 (reference_releases.py): not compared
        elif cached is not None:
            # GLM-Image: forward() takes decode step k's positions from the cache
            # get_rope_index fills, [B, 3, steps], at k = past length - prefill length.
            result["decode"] = cached[:, :, :decode_steps].permute(1, 0, 2).numpy()
        results.append(result)
    source = inspect.getsourcefile(cls.get_rope_index)
    line = inspect.getsourcelines(cls.get_rope_index)[1]
    return results, f"{source.split('site-packages/')[-1].split('targets/')[-1]}:{line}"


def main():
    request = pickle.load(sys.stdin.buffer)
    response = {"version": transformers.__version__, "torch": torch.__version__,
                "results": {}, "sources": {}}
    for family, (config, prompts) in request["families"].items():
        if request.get("skip_absent") and model_class(family) is None:
            continue  # a release without the family (reference_releases.py)
        response["results"][family], response["sources"][family] = run(
            family, config, prompts, request["decode_steps"])
    pickle.dump(response, sys.stdout.buffer)


if __name__ == "__main__":
    main()
