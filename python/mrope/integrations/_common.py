"""What the runtime plugins share: the environment switch, the mrope.Model of a runtime's M-RoPE
layer, and the rotation on the CPU with mrope's cos/sin."""
import functools
import json
import logging
import os

logger = logging.getLogger("mrope.integrations")

# The runtimes build their cos/sin caches from fp32 angles (position * fp32 inv_freq); mrope's
# "float32" math does the same (and is the fast one on GPUs), so a plugin's layer rounds as the
# layer it replaces ("double" differs from vLLM's cache by an ulp of bf16 here and there).
SINCOS_MATH = "float32"

# (NeoX halves?, interleaved sections?) -> the preset whose rotary layout that is; head_dim,
# rotary_dim, theta and sections are overridden with the layer's own.
_ROTARY_PRESET = {(True, False): "qwen2_vl", (True, True): "qwen3_vl", (False, False): "glm4v"}


def parts(variable, known, default):
    """The comma-separated parts named in $`variable` (default `default`; "none": none).
    Unknown names are logged, one line, and dropped."""
    value = os.environ.get(variable, default).strip()
    named = [p.strip() for p in value.split(",") if p.strip() and p.strip() != "none"]
    unknown = [p for p in named if p not in known]
    if unknown:
        logger.warning("mrope: %s=%s: skipped unknown part(s) %s (known: %s)", variable, value,
                       ", ".join(unknown), ", ".join(known))
    return tuple(p for p in known if p in named)


@functools.lru_cache(maxsize=None)
def _model(preset, overrides_json):
    import mrope
    return mrope.Model.from_config(preset, overrides=json.loads(overrides_json))


def positions_model(preset, config, keys):
    """The Model of `preset` with the `keys` the runtime's config holds (token ids on the config,
    merge size and time scale on its vision_config), one per distinct config."""
    vision = getattr(config, "vision_config", None)
    overrides = {}
    for key in keys:
        holder = vision if key in ("spatial_merge_size", "tokens_per_second") else config
        value = getattr(holder, key, None)
        if value is not None:
            overrides[key] = value
    return positions_model_from(preset, overrides)


def positions_model_from(preset, overrides):
    """The Model of `preset` with `overrides`, one per distinct value."""
    return _model(preset, json.dumps(overrides, sort_keys=True))


def rotary_model(head_size, rotary_dim, base, is_neox_style, mrope_section, interleaved,
                 unsupported=None):
    """(mrope.Model, None) for an M-RoPE layer of these parameters, or (None, why not);
    `unsupported`: the runtime's reason to refuse it, if any."""
    if unsupported:
        return None, unsupported
    if not mrope_section or len(mrope_section) != 3:
        return None, f"mrope_section {mrope_section}"
    preset = _ROTARY_PRESET.get((bool(is_neox_style), bool(interleaved)))
    if preset is None:
        return None, "GPT-J pairs with interleaved sections"
    overrides = {"rope_theta": float(base), "head_dim": int(head_size),
                 "partial_rotary_factor": rotary_dim / head_size,
                 "mrope_section": [int(s) for s in mrope_section]}
    try:
        model = _model(preset, json.dumps(overrides, sort_keys=True))
        from mrope import _launch  # pylint: disable=import-outside-toplevel
        _, info = _launch.rotary_of(model._source, 1, SINCOS_MATH)
    except (ValueError, ImportError, OSError) as e:
        return None, str(e)
    if (info.head_dim, info.rotary_dim) != (head_size, rotary_dim):
        return None, f"mrope's rotary is {info.head_dim}/{info.rotary_dim}"
    return model, None


def rotate_on_cpu(model, positions, x, head_size, rotary_dim, is_neox_style):
    """x [T, H * head_size] (or [T, H, head_size]) rotated in place at positions [3, T] or [T]
    by mrope's cos/sin (mrope.cuda.cos_sin: the C++ rotary), rounded to x's dtype and applied
    in it, as the runtimes' M-RoPE layers apply their caches (vLLM's forward_native)."""
    import torch
    import mrope.cuda
    cos, sin = mrope.cuda.cos_sin(positions.cpu().numpy(), model, sincos_math=SINCOS_MATH)
    cos = torch.from_numpy(cos)[:, None, :].to(x.dtype)
    sin = torch.from_numpy(sin)[:, None, :].to(x.dtype)
    heads = x.view(x.shape[0], -1, head_size)
    rot = heads[..., :rotary_dim]
    if is_neox_style:
        x1, x2 = rot.chunk(2, dim=-1)
        heads[..., :rotary_dim] = torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
    else:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
        heads[..., :rotary_dim] = torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin),
                                              dim=-1).flatten(-2)
    return x
