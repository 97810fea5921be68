"""Runs prompts through an installed transformers' own get_rope_index and generate() step, in
the process the test starts for that transformers (its directory first on sys.path).

stdin: pickle {"families": {family: (config, [prompts of reference_prompts.py])},
"decode_steps": K, "skip_absent": leave out the families this release lacks,
"generate_prompts": G (THINKERS: generate() runs on the first G prompts)}.
stdout: pickle {"version", "results": {family: [{positions, deltas, decode, error}]},
"sources": {family: "path:line of get_rope_index"}}; numpy arrays, dtypes as torch gave them.

The model classes' get_rope_index is called unbound on a stand-in `self` with the config
attributes it reads: no weights, no downloads. The Omni thinkers compute their decode positions
in their own generate() and forward() (transformers PR #47872 changed them), so theirs come from
generate() itself on a tiny random-weight thinker (THINKERS).
"""
import importlib
import inspect
import pickle
import sys
import types

import numpy as np
import torch
import transformers

torch.set_num_threads(1)  # tiny models: threads cost more than they give on a shared CI machine
from transformers.generation.utils import GenerationMixin

import stand_in

MODEL_CLASSES = {
    "qwen2_vl": "qwen2_vl.modeling_qwen2_vl.Qwen2VLModel",
    "qwen2_5_vl": "qwen2_5_vl.modeling_qwen2_5_vl.Qwen2_5_VLModel",
    "qwen3_vl": "qwen3_vl.modeling_qwen3_vl.Qwen3VLModel",
    "glm4v": "glm4v.modeling_glm4v.Glm4vModel",
    "qwen3_5": "qwen3_5.modeling_qwen3_5.Qwen3_5Model",
    "glm46v": "glm46v.modeling_glm46v.Glm46VModel",
    "paddleocr_vl": "paddleocr_vl.modeling_paddleocr_vl.PaddleOCRVLModel",
    "qwen2_5_omni": "qwen2_5_omni.modeling_qwen2_5_omni.Qwen2_5OmniThinkerForConditionalGeneration",
    "qwen3_omni": "qwen3_omni_moe.modeling_qwen3_omni_moe.Qwen3OmniMoeThinkerForConditionalGeneration",
    "qwen3_5_moe": "qwen3_5_moe.modeling_qwen3_5_moe.Qwen3_5MoeModel",
    "ernie4_5_vl_moe": "ernie4_5_vl_moe.modeling_ernie4_5_vl_moe.Ernie4_5_VLMoeModel",
    "glm_image": "glm_image.modeling_glm_image.GlmImageModel",
    "qwen4_exp": "qwen4_exp.modeling_qwen4_exp.Qwen4ExpModel",
    "cosmos3_omni": "cosmos3_omni.modeling_cosmos3_omni.Cosmos3OmniModel",
    "cosmos3_edge": "cosmos3_edge.modeling_cosmos3_edge.Cosmos3EdgeModel",
    "cohere_compass": "cohere_compass.modeling_cohere_compass.CohereCompassModel",
    "hunyuan_vl": "hunyuan_vl.modeling_hunyuan_vl.HunYuanVLModel",
}
# A class's name in earlier releases (reference_releases.py): ERNIE's in 5.0 to 5.2.
FORMER_NAMES = {"ernie4_5_vl_moe": ("Ernie4_5_VL_MoeModel",)}


# The thinkers whose generate() is run: their config class, the text config's size (1 layer,
# 2 heads of 8: the sections [2, 1, 1] cover head_dim / 2) and the config keys of their ids.
THINKERS = {
    "qwen2_5_omni": ("qwen2_5_omni.configuration_qwen2_5_omni.Qwen2_5OmniThinkerConfig", {}),
    "qwen3_omni": ("qwen3_omni_moe.configuration_qwen3_omni_moe.Qwen3OmniMoeThinkerConfig",
                   {"num_experts": 2, "num_experts_per_tok": 1, "moe_intermediate_size": 8}),
}


def _import(path):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module("transformers.models." + module), name)


# The thinker's vocabulary: text ids fold into [0, _TEXT_IDS), the family's special ids follow.
# A prompt's positions depend on which tokens are special, not on the ids: a small vocabulary
# keeps the logits (B x L x vocab at prefill) small.
_TEXT_IDS = 64


def _small_ids(config):
    """{the family's id: the thinker's id} for every special token id of `config`."""
    special = sorted(v for k, v in config.items() if k.endswith("_token_id"))
    return {token: _TEXT_IDS + i for i, token in enumerate(special)}


def _thinker(family, config):
    """A random-weight thinker of `family` with `config`'s time scales and merge size, its
    special ids renumbered by _small_ids, on the CPU."""
    config_path, text_extra = THINKERS[family]
    small = _small_ids(config)
    rope = {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [2, 1, 1],
            "mrope_interleaved": family == "qwen3_omni", "interleaved": family == "qwen3_omni"}
    text = dict(vocab_size=_TEXT_IDS + len(small), hidden_size=16, intermediate_size=16,
                num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, head_dim=8,
                **text_extra)
    if transformers.__version__.startswith("4."):
        text["rope_scaling"] = rope
    else:
        text["rope_parameters"] = rope
    vision = {"depth": 1, "hidden_size": 16, "intermediate_size": 16, "num_heads": 2,
              "out_hidden_size": 16, "spatial_merge_size": config["spatial_merge_size"]}
    audio = {"encoder_layers": 1, "d_model": 16, "encoder_attention_heads": 2,
             "encoder_ffn_dim": 16, "output_dim": 16}
    thinker_config = _import(config_path)(text_config=text, vision_config=vision,
                                          audio_config=audio)
    for key, value in config.items():
        if key not in ("spatial_merge_size", "tokens_per_second"):
            # Ids set by name also set image_token_index etc. (the config's attribute_map).
            setattr(thinker_config, key, small.get(value, value) if key.endswith("_token_id")
                    else value)
    torch.manual_seed(0)
    model = _import(MODEL_CLASSES[family])(thinker_config).eval()
    model.small_ids = small
    return model


def _generate_decode(model, prompt, steps):
    """The positions [3, B, steps] that generate() gives the text model's rotary embedding at
    decode steps 1..steps, the prompt given as the processor returns it (no pixels: the grids
    and lengths are what positions read)."""
    import tiny_models  # pylint: disable=import-outside-toplevel
    ids = prompt["input_ids"]
    small = np.vectorize(lambda token: model.small_ids.get(token, token % _TEXT_IDS))(ids)
    kwargs = {"input_ids": _tensor(small.astype(np.int64)),
              "attention_mask": _tensor(prompt["attention_mask"]),
              "image_grid_thw": _tensor(prompt["image_grid_thw"]),
              "video_grid_thw": _tensor(prompt["video_grid_thw"]),
              "video_second_per_grid": _tensor(prompt["second_per_grid_ts"], torch.float32),
              "use_audio_in_video": prompt["use_audio_in_video"]}
    if prompt["audio_seqlens"] is not None:  # the feature extractor's mask, padded
        frames = torch.tensor(prompt["audio_seqlens"])
        kwargs["feature_attention_mask"] = (
            torch.arange(int(frames.max()))[None, :] < frames[:, None]).long()

    def generate():
        with torch.no_grad():
            model.generate(**{k: v for k, v in kwargs.items() if v is not None},
                           max_new_tokens=steps + 1, min_new_tokens=steps + 1, do_sample=False,
                           eos_token_id=None, pad_token_id=0)
    return tiny_models.decode_positions(model, generate)[0]


def _config(values):
    vision = types.SimpleNamespace(temporal_patch_size=2, tokens_per_second=2)
    ids, text = {}, {}
    for key, value in values.items():
        if key in ("spatial_merge_size", "temporal_merge_size", "tokens_per_second"):
            setattr(vision, key, value)
        elif key == "mrope_section":  # HunYuan-VL: its length is the number of axes
            text["rope_parameters"] = {key: value}
        else:
            ids[key] = value
    return types.SimpleNamespace(vision_config=vision,
                                 text_config=types.SimpleNamespace(**ids, **text),
                                 audio_config=types.SimpleNamespace(n_window=50), **ids)


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


def run(family, config, prompts, decode_steps, generate_prompts):
    cls = model_class(family)
    # The Omni thinker reads its merge size from itself (__init__ copies it there).
    vision = _config(config).vision_config
    this = stand_in.Self(cls, _config(config), rope_deltas=None,
                         spatial_merge_size=vision.spatial_merge_size)
    thinker = _thinker(family, config) if family in THINKERS else None
    accepted = inspect.signature(cls.get_rope_index).parameters
    v5_generate = "mm_token_type_ids" in accepted  # decode: each axis from its own last value
    results = []
    for index, prompt in enumerate(prompts):
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
        if thinker is not None and index < generate_prompts:
            result["decode"] = _generate_decode(thinker, prompt, decode_steps)
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
            family, config, prompts, request["decode_steps"],
            request.get("generate_prompts", 0))
    pickle.dump(response, sys.stdout.buffer)


if __name__ == "__main__":
    main()
