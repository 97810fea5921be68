"""Builds the text rotary of the families vLLM alone defines (Isaac, Keye-VL, openPangu-VL) as
the installed vLLM's own model code builds it from a config.json, in the process the test starts
for it (its directory first on sys.path), and runs it.

- isaac: IsaacConfig(**config.json), then IsaacForConditionalGeneration.__init__ up to the text
  model (it writes rope_parameters["mrope_section"]); the text model is Qwen3's.
- keye: the checkpoint's config class is its remote code: a PretrainedConfig of config.json's
  text keys (its text_config where it nests one, else its top level); the text model is
  Qwen3's (KeyeForConditionalGeneration: Qwen3ForCausalLM).
- openpangu_vl: the same; the text attention's own _init_rotary_emb (PanguEmbedded) on a
  stand-in `self`.
vLLM's get_config patches the rope parameters first (patch_rope_parameters), as here. A Qwen3
text model's rotary is its attention's get_rope(head_dim, max_position, rope_parameters=...)
(vllm/model_executor/models/qwen3.py).

stdin: pickle {"cases": [{family, config, positions [3, T], seed}]}.
stdout: pickle {"version", "results": [{layer, mrope_section, mrope_interleaved, axes, neox,
head_size, rotary_dim, cos, sin, q_in, k_in, q, k} or {error}]}: q_in [T, 2 * D], k_in [T, D]
uniform in [-1, 1) of the seed at the layer's own head size D, q, k them rotated by the
layer's forward_native; cos, sin [T, rotary_dim / 2] from the same forward (a NeoX layer
rotating [1, ..., 1, 0, ..., 0] gives [cos, sin] exactly: x1 cos - x2 sin, x2 cos + x1 sin);
axes: MRotaryEmbeddingInterleaved's position row of each pair (its mrope_dim), else None.
"""
import pickle
import sys
import types
from unittest import mock

import numpy as np
import torch
import vllm
from transformers import PretrainedConfig
from vllm.config import DeviceConfig, VllmConfig, set_current_vllm_config
from vllm.model_executor.layers.rotary_embedding import MRotaryEmbeddingInterleaved, get_rope
from vllm.transformers_utils.config import patch_rope_parameters


class _TextConfig(Exception):
    """Raised where IsaacForConditionalGeneration builds its text model: its config then."""


def _isaac_text_config(config_json):
    from vllm.model_executor.models import isaac
    from vllm.transformers_utils.configs.isaac import IsaacConfig

    config = IsaacConfig(**config_json)
    patch_rope_parameters(config)
    patch_rope_parameters(config.get_text_config())

    def text_model(vllm_config, **_):
        raise _TextConfig(vllm_config.model_config.hf_config.get_text_config())

    model_config = types.SimpleNamespace(
        hf_config=config,
        get_multimodal_config=lambda: types.SimpleNamespace(mm_encoder_only=False))
    vllm_config = types.SimpleNamespace(model_config=model_config, quant_config=None)
    with mock.patch.object(isaac, "init_vllm_registered_model", text_model), \
            mock.patch.object(isaac, "_resolve_vision_token_id", lambda *_: 151655):
        try:
            isaac.IsaacForConditionalGeneration(vllm_config=vllm_config)
        except _TextConfig as found:
            return found.args[0]
    raise AssertionError("IsaacForConditionalGeneration built no text model")


def _remote_config(config_json):
    config = PretrainedConfig(**config_json.get("text_config", config_json))
    patch_rope_parameters(config)
    return config


def _head_dim(config):
    return getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads


def _qwen3_rotary(config):
    return get_rope(_head_dim(config), max_position=config.max_position_embeddings,
                    rope_parameters=config.rope_parameters)


def _pangu_rotary(config):
    from vllm.model_executor.models.openpangu import OpenPanguEmbeddedAttention

    this = types.SimpleNamespace(head_dim=_head_dim(config),
                                 max_position_embeddings=config.max_position_embeddings)
    OpenPanguEmbeddedAttention._init_rotary_emb(this, config, None)
    return this.rotary_emb


def rotary(family, config_json):
    if family == "isaac":
        return _qwen3_rotary(_isaac_text_config(config_json))
    if family == "keye":
        return _qwen3_rotary(_remote_config(config_json))
    if family == "openpangu_vl":
        return _pangu_rotary(_remote_config(config_json))
    raise ValueError(f"no rotary for {family}")


def run(case):
    try:
        layer = rotary(case["family"], case["config"])
    except Exception as e:  # the reference's own refusal is a result too
        return {"error": f"{type(e).__name__}: {e}"}
    sections = list(getattr(layer, "mrope_section", None) or [])
    positions = torch.from_numpy(case["positions"])
    if not sections:  # no mrope_section: vLLM's text rotary is 1-D (uses_mrope is false)
        positions = positions[0]
    # MRotaryEmbeddingInterleaved (openPangu's) replaces forward itself; the others dispatch.
    forward = (layer.forward if isinstance(layer, MRotaryEmbeddingInterleaved)
               else layer.forward_native)
    tokens, half = positions.shape[-1], layer.rotary_dim // 2
    rng = np.random.default_rng(case["seed"])
    q_in = rng.uniform(-1, 1, (tokens, 2 * layer.head_size)).astype(np.float32)
    k_in = rng.uniform(-1, 1, (tokens, layer.head_size)).astype(np.float32)
    q, k = forward(positions, torch.from_numpy(q_in).clone(), torch.from_numpy(k_in).clone())
    probe = torch.zeros(tokens, layer.head_size)
    probe[:, :half] = 1
    both, _ = forward(positions, probe, probe.clone())
    result = {"layer": type(layer).__name__, "mrope_section": sections,
              "mrope_interleaved": bool(getattr(layer, "mrope_interleaved", False)),
              "axes": list(layer.mrope_dim[:half]) if hasattr(layer, "mrope_dim") else None,
              "neox": bool(layer.is_neox_style), "head_size": layer.head_size,
              "rotary_dim": layer.rotary_dim, "q_in": q_in, "k_in": k_in, "q": q.numpy(),
              "k": k.numpy()}
    if layer.is_neox_style:
        result["cos"], result["sin"] = both[:, :half].numpy(), both[:, half:2 * half].numpy()
    return result


def main():
    request = pickle.load(sys.stdin.buffer)
    with set_current_vllm_config(VllmConfig(device_config=DeviceConfig(device="cpu"))):
        results = [run(case) for case in request["cases"]]
    pickle.dump({"version": vllm.__version__, "results": results}, sys.stdout.buffer)


if __name__ == "__main__":
    main()
