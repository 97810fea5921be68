"""mrope in SGLang, with no code change: the wheel declares the entry point

    [sglang.srt.plugins]
    mrope = mrope.integrations.sglang:register

which SGLang's loader (sglang.srt.plugins.load_plugins) calls in every process, then applying
the registered HookRegistry hooks. ``register`` registers the parts named in ``MROPE_SGLANG``
(comma-separated; default ``positions,rotary``; ``none``: nothing):

- ``positions``: an AROUND hook on ``MRotaryEmbedding.get_rope_index`` returning mrope's
  positions and deltas for the model types in ``POSITION_MODEL_TYPES`` (others, and requests
  mrope refuses, go to SGLang's own, the latter logged once: e.g. Qwen3-VL videos in the
  processor layout of transformers >= 5.10, whose outer <vision_start> mrope's hf_v5_2 rules
  refuse).
- ``rotary``: an AROUND hook on ``MRotaryEmbedding.forward_cuda`` running mrope's kernel
  (``torch.ops.mrope.apply_mrope_``) for M-RoPE positions of a layer mrope covers; other calls
  go to SGLang's.

Whatever cannot apply is logged in one line naming it; ``register`` never raises and is
idempotent.
"""
import functools

from mrope.integrations import _common

logger = _common.logger
PARTS = ("positions", "rotary")
DEFAULT = "positions,rotary"
_MROPE = "sglang.srt.layers.rotary_embedding.mrope.MRotaryEmbedding"

# SGLang's model_type -> the mrope preset whose positions SGLang's get_rope_index computes.
POSITION_MODEL_TYPES = {"qwen2_vl": "qwen2_vl", "qwen2_5_vl": "qwen2_5_vl",
                        "qwen3_vl": "qwen3_vl_hf_v5_2", "qwen3_vl_moe": "qwen3_vl_hf_v5_2"}

_registered = set()


def register():
    """SGLang's general plugin: registers the hooks of $MROPE_SGLANG once per process."""
    for part in _common.parts("MROPE_SGLANG", PARTS, DEFAULT):
        if part in _registered:
            continue
        _registered.add(part)
        try:
            from sglang.srt.plugins.hook_registry import HookRegistry, HookType
            hook = {"positions": get_rope_index, "rotary": forward_cuda}[part]
            HookRegistry.register(f"{_MROPE}.{hook.__name__}", hook, HookType.AROUND)
        except Exception as e:  # never break SGLang's start
            logger.warning("mrope: SGLang plugin part %r skipped: %s: %s", part,
                           type(e).__name__, e)


def get_rope_index(original, spatial_merge_size, image_token_id, video_token_id,
                   vision_start_token_id, model_type, tokens_per_second=None, input_ids=None,
                   image_grid_thw=None, video_grid_thw=None, second_per_grid_ts=None,
                   **kwargs):
    """MRotaryEmbedding.get_rope_index's AROUND hook: mrope's (positions, deltas)."""
    args = (spatial_merge_size, image_token_id, video_token_id, vision_start_token_id,
            model_type, tokens_per_second, input_ids, image_grid_thw, video_grid_thw,
            second_per_grid_ts)
    preset = POSITION_MODEL_TYPES.get(model_type)
    if preset is None or kwargs.get("attention_mask") is not None:
        return original(*args, **kwargs)
    overrides = {"spatial_merge_size": spatial_merge_size, "image_token_id": image_token_id,
                 "video_token_id": video_token_id,
                 "vision_start_token_id": vision_start_token_id}
    if model_type == "qwen2_5_vl" and tokens_per_second is not None:
        overrides["tokens_per_second"] = tokens_per_second
    try:
        model = _common.positions_model_from(preset, overrides)
        grids = {k: v for k, v in (("image_grid_thw", image_grid_thw),
                                   ("video_grid_thw", video_grid_thw),
                                   ("second_per_grid_ts", second_per_grid_ts))
                 if v is not None}
        return model.get_rope_index(input_ids, **grids)
    except ValueError as e:
        _log_fallback(model_type, str(e))
        return original(*args, **kwargs)


@functools.lru_cache(maxsize=None)
def _log_fallback(model_type, error):
    logger.warning("mrope: SGLang %s: a request went to SGLang's positions: %s", model_type,
                   error)


def forward_cuda(original, self, positions, query, key, fused_set_kv_buffer_arg=None):
    """MRotaryEmbedding.forward_cuda's AROUND hook: mrope's kernel for M-RoPE positions."""
    model = _layer_model(self)
    if (model is None or positions.ndim != 2 or fused_set_kv_buffer_arg is not None or
            query.shape[0] == 0):
        return original(self, positions, query, key, fused_set_kv_buffer_arg)
    import torch
    import mrope.cuda
    flag = mrope.cuda.error_flag(query)
    torch.ops.mrope.apply_mrope_(query, key, positions, mrope.cuda.model_key(model), 1,
                                 _common.SINCOS_MATH, None, flag)
    return query, key


def _layer_model(layer):
    """The mrope.Model of an SGLang M-RoPE layer, made on its first call (None: not covered,
    logged once per reason)."""
    if "_mrope_model" not in layer.__dict__:
        model, why = _common.rotary_model(
            layer.head_size, layer.rotary_dim, layer.base, layer.is_neox_style,
            layer.mrope_section, layer.mrope_interleaved,
            f"{type(layer).__name__}" if type(layer).__name__ != "MRotaryEmbedding" else
            "GLM's interleaving" if getattr(layer, "mrope_interleaved_glm", False) else None)
        if why is not None:
            _log_layer_skipped(why)
        layer.__dict__["_mrope_model"] = model
    return layer.__dict__["_mrope_model"]


@functools.lru_cache(maxsize=None)
def _log_layer_skipped(why):
    logger.warning("mrope: an SGLang MRotaryEmbedding keeps SGLang's forward: %s", why)
