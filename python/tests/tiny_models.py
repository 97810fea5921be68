"""Tiny random-weight models of the M-RoPE families, built from shrunken configs of the installed
transformers (4.57 or 5.x): 2 text layers, small hidden and vision sizes, seeded init, no
downloads; and the processor-shaped inputs their forward() takes (reference_prompts.py's
prompts with pixel values of matching sizes). Imported by reference_runner_tiny.py in the
process of one transformers release.
"""
import importlib
import inspect

import torch
import transformers

import reference_prompts

VERSION = tuple(int(p) for p in transformers.__version__.split(".")[:3])

# family: (module, config class, model class (the one generate() runs)).
CLASSES = {
    "qwen2_vl": ("qwen2_vl", "Qwen2VLConfig", "Qwen2VLForConditionalGeneration"),
    "qwen2_5_vl": ("qwen2_5_vl", "Qwen2_5_VLConfig", "Qwen2_5_VLForConditionalGeneration"),
    "qwen3_vl": ("qwen3_vl", "Qwen3VLConfig", "Qwen3VLForConditionalGeneration"),
    "qwen3_5": ("qwen3_5", "Qwen3_5Config", "Qwen3_5ForConditionalGeneration"),
    "glm4v": ("glm4v", "Glm4vConfig", "Glm4vForConditionalGeneration"),
    "qwen2_5_omni": ("qwen2_5_omni", "Qwen2_5OmniThinkerConfig",
                     "Qwen2_5OmniThinkerForConditionalGeneration"),
}

PATCH = 2  # vision patch size: a patch is 3 * 2 * PATCH * PATCH pixel values
HEAD_DIM = 16
# Weights' standard deviation: the checkpoints' 0.02 gives logits of ~1e-2 that a wrong position
# moves by ~1e-5; this makes them ~1, so the 1e-6 tolerance is far below a wrong position's mark.
INIT_STD = 0.2
# mrope_section of a HEAD_DIM rotary (Qwen3's interleaved layout: T gets the most).
# GLM-4.1V rotates half of each head.
SECTIONS = {"qwen3_vl": [4, 2, 2], "qwen3_5": [4, 2, 2], "glm4v": [2, 1, 1]}
DEFAULT_SECTIONS = [2, 3, 3]


def families():
    """The CLASSES the installed transformers has."""
    return tuple(f for f, (module, _, _) in CLASSES.items()
                 if importlib.util.find_spec("transformers.models." + module) is not None)


def _classes(family):
    module, config, model = CLASSES[family]
    module = importlib.import_module("transformers.models." + module)
    return getattr(module, config), getattr(module, model)


def _text_config(family, vocab_size):
    sections = SECTIONS.get(family, DEFAULT_SECTIONS)
    config = {"vocab_size": vocab_size, "hidden_size": 32, "intermediate_size": 64,
              "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
              "head_dim": HEAD_DIM, "max_position_embeddings": 4096,
              "initializer_range": INIT_STD,
              "rope_scaling": {"rope_type": "default", "mrope_section": sections}}
    if family == "qwen3_vl" or family == "qwen3_5":
        config["rope_scaling"]["mrope_interleaved"] = True
    if family == "qwen3_5":  # one Gated DeltaNet layer, one attention layer
        config.update(layer_types=["linear_attention", "full_attention"],
                      linear_key_head_dim=8, linear_value_head_dim=8, linear_num_key_heads=2,
                      linear_num_value_heads=2, full_attention_interval=2)
    if family == "glm4v":
        config["partial_rotary_factor"] = 0.5
    return config


def _vision_config(family):
    common = {"depth": 2, "num_heads": 2, "patch_size": PATCH, "spatial_merge_size": 2,
              "temporal_patch_size": 2, "in_channels": 3, "initializer_range": INIT_STD}
    if family == "qwen2_vl":
        return {**common, "embed_dim": 16, "hidden_size": 32, "mlp_ratio": 2}
    if family in ("qwen2_5_vl", "qwen2_5_omni"):
        return {**common, "hidden_size": 16, "intermediate_size": 32, "out_hidden_size": 32,
                "window_size": 4 * PATCH, "fullatt_block_indexes": [1], "tokens_per_second": 2}
    if family in ("qwen3_vl", "qwen3_5"):
        return {**common, "hidden_size": 16, "intermediate_size": 32, "out_hidden_size": 32,
                "num_position_embeddings": 64, "deepstack_visual_indexes": [0]}
    if family == "glm4v":
        return {**common, "hidden_size": 16, "intermediate_size": 32, "out_hidden_size": 32,
                "image_size": 8 * PATCH}
    raise ValueError(family)


def build(family, ids, seed=0):
    """The tiny model of `family` with the token ids `ids` (reference_prompts.FAMILY_CONFIG),
    in eval mode, fp32, weights drawn with torch seed `seed`."""
    config_class, model_class = _classes(family)
    token_ids = {k: v for k, v in ids.items() if k.endswith("_token_id")}
    vocab_size = max(*token_ids.values(), reference_prompts.PAD_ID) + 1
    text = _text_config(family, vocab_size)
    vision = _vision_config(family)
    if family == "qwen2_5_omni":
        audio = {"num_mel_bins": 16, "encoder_layers": 1, "encoder_attention_heads": 2,
                 "encoder_ffn_dim": 32, "d_model": 16, "output_dim": 32}
        index_ids = {k.replace("_token_id", "_token_index") if k in (
            "image_token_id", "video_token_id", "audio_token_id") else k: v
            for k, v in token_ids.items()}
        config = config_class(text_config=text, vision_config=vision, audio_config=audio,
                              position_id_per_seconds=ids["position_id_per_seconds"],
                              seconds_per_chunk=ids["seconds_per_chunk"], **index_ids)
    else:
        config = config_class(text_config=text, vision_config=vision, **token_ids)
    config.pad_token_id = config.get_text_config().pad_token_id = None
    config.initializer_range = INIT_STD
    torch.manual_seed(seed)
    model = model_class(config).eval()
    return model


def text_rotary(model):
    """The text model's rotary embedding: the shallowest `rotary_emb` outside the vision and
    audio towers (4.57's attention layers hold unused copies deeper down)."""
    return min(((name, module) for name, module in model.named_modules()
                if name.endswith("rotary_emb") and "visual" not in name and "audio" not in name),
               key=lambda item: item[0].count("."))[1]


def decode_positions(model, generate):
    """The positions [3, B, steps] the text rotary receives at each decode step of
    `generate()` (a call that runs model.generate once), and generate's result."""
    seen = []
    hook = text_rotary(model).register_forward_hook(  # rotary_emb(x, position_ids)
        lambda module, args, kwargs, output: seen.append(
            args[1] if len(args) > 1 else kwargs["position_ids"]), with_kwargs=True)
    try:
        result = generate()
    finally:
        hook.remove()
    return torch.cat([positions[..., -1:] for positions in seen[1:]], dim=-1).numpy(), result


def inputs(family, prompt, seed=0):
    """forward()'s keyword arguments for `prompt` (reference_prompts.random_prompt): token ids,
    mask, grids, seconds per grid, mm_token_type_ids where forward() takes them (5.x), and
    seeded pixel values of the grids' sizes."""
    generator = torch.Generator().manual_seed(seed)
    patch = 3 * 2 * PATCH * PATCH
    kwargs = {"input_ids": torch.tensor(prompt["input_ids"]),
              "attention_mask": torch.tensor(prompt["attention_mask"])}
    for kind, pixels in (("image", "pixel_values"), ("video", "pixel_values_videos")):
        grid = prompt[kind + "_grid_thw"]
        if grid is not None:
            kwargs[kind + "_grid_thw"] = torch.tensor(grid)
            kwargs[pixels] = torch.randn(int(grid.prod(-1).sum()), patch, generator=generator)
    if prompt["second_per_grid_ts"] is not None:
        name = "video_second_per_grid" if family == "qwen2_5_omni" else "second_per_grid_ts"
        kwargs[name] = torch.tensor(prompt["second_per_grid_ts"])
    if "mm_token_type_ids" in inspect.signature(_classes(family)[1].forward).parameters:
        kwargs["mm_token_type_ids"] = torch.tensor(prompt["mm_token_type_ids"])
    return kwargs
