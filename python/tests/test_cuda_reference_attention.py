"""mrope.cuda's fused kernel (host execution harness) against the installed transformers'
own attention code, on random inputs and weights, for the families whose attention feeds the
kernel something besides a normalised head before the rotary:
 - Qwen4-Exp: q_proj gives [q | gate] per head, q and k take a (1 + w) RMSNorm, a quarter of
   the head rotates (its Qwen4ExpTextRMSNorm, Qwen4ExpTextRotaryEmbedding and
   apply_rotary_pos_emb; mrope on a view of the q half of the same q_proj output);
 - HunYuan-VL: XD-RoPE over four position rows, then the w * x / rms(x) norm of the rotated q
   and k (its HunYuanVLRotaryEmbedding, apply_rotary_pos_emb, query_layernorm and
   key_layernorm).
fp32, within 4 ulp of each rotated pair's magnitude (times the norm weight)."""
import json
import os

import numpy as np
import pytest

import golden
import mrope
import mrope.cuda as mc
from mrope import _capi

pytestmark = pytest.mark.skipif(not _capi.kernels_on_host(),
                                reason="needs the host-harness package (pytest_cuda_host)")

CONFIG = "examples/configs/v5_defaults/qwen4_exp.json"
HUNYUAN_CONFIG = "examples/configs/v5_defaults/hunyuan_vl.json"
TOKENS, Q_HEADS, KV_HEADS = 13, 2, 1
MAX_ULP = 4


def reference_attention_input(qg, k, positions, q_weight, k_weight, text_config):
    """Qwen4ExpTextAttention.forward's statements up to apply_rotary_pos_emb, [T, H, D]."""
    torch = pytest.importorskip("torch")
    modeling = pytest.importorskip("transformers.models.qwen4_exp.modeling_qwen4_exp")
    from transformers.models.qwen4_exp.configuration_qwen4_exp import Qwen4ExpTextConfig
    config = Qwen4ExpTextConfig(**text_config)
    head_dim = config.head_dim
    q_norm = modeling.Qwen4ExpTextRMSNorm(head_dim, eps=config.rms_norm_eps)
    k_norm = modeling.Qwen4ExpTextRMSNorm(head_dim, eps=config.rms_norm_eps)
    with torch.no_grad():
        q_norm.weight.copy_(torch.from_numpy(q_weight))
        k_norm.weight.copy_(torch.from_numpy(k_weight))
        hidden = torch.from_numpy(qg)[None]  # [1, T, Hq * 2D]: the q_proj output
        query, _gate = torch.chunk(hidden.view(1, TOKENS, -1, head_dim * 2), 2, dim=-1)
        query = q_norm(query).transpose(1, 2)
        key = k_norm(torch.from_numpy(k)[None].view(1, TOKENS, -1, head_dim)).transpose(1, 2)
        rotary = modeling.Qwen4ExpTextRotaryEmbedding(config)
        cos, sin = rotary(query, torch.from_numpy(positions)[:, None])
        query, key = modeling.apply_rotary_pos_emb(query, key, cos, sin)
    return query[0].transpose(0, 1).numpy(), key[0].transpose(0, 1).numpy()


def within_ulp(ours, want, rotary_dim):
    """|ours - want| <= MAX_ULP ulp of the pair's magnitude (rotated dims, NeoX halves) or of
    the value (dims past rotary_dim)."""
    half = rotary_dim // 2
    scale = np.abs(want).astype(np.float32)
    pair = np.hypot(want[..., :half], want[..., half:rotary_dim])
    scale[..., :half] = pair
    scale[..., half:rotary_dim] = pair
    return np.abs(ours - want) <= MAX_ULP * np.spacing(scale)


def test_qwen4_exp_gated_q_norm_and_partial_rotary():
    with open(os.path.join(golden.REPO_DIR, CONFIG)) as f:
        text_config = json.load(f)["text_config"]
    model = mrope.Model.from_config(os.path.join(golden.REPO_DIR, CONFIG))
    head_dim = text_config["head_dim"]
    rng = np.random.default_rng(36)
    qg = rng.standard_normal((TOKENS, Q_HEADS * 2 * head_dim)).astype(np.float32)
    k = rng.standard_normal((TOKENS, KV_HEADS * head_dim)).astype(np.float32)
    v = rng.standard_normal((TOKENS, KV_HEADS * head_dim)).astype(np.float32)
    q_weight = rng.uniform(-0.5, 0.5, head_dim).astype(np.float32)
    k_weight = rng.uniform(-0.5, 0.5, head_dim).astype(np.float32)
    # t, h, w rows of an image block inside text (as get_rope_index gives them).
    positions = np.stack([np.r_[0:4, [4] * 4, 6:11], np.r_[0:4, 4, 4, 5, 5, 6:11],
                          np.r_[0:4, 4, 5, 4, 5, 6:11]]).astype(np.int64)
    want_q, want_k = reference_attention_input(qg, k, positions, q_weight, k_weight,
                                               text_config)
    q = qg.reshape(TOKENS, Q_HEADS, 2 * head_dim)[:, :, :head_dim]  # the q half of each head
    gate = qg.reshape(TOKENS, Q_HEADS, 2 * head_dim)[:, :, head_dim:].copy()
    k_out = np.empty((TOKENS, KV_HEADS, head_dim), np.float32)
    mc.fused_mrope_(q, k.reshape(TOKENS, KV_HEADS, head_dim), v, positions, model,
                    k_out=k_out, q_norm_weight=q_weight, k_norm_weight=k_weight,
                    eps=1e-6)  # the norm form: the family's, (1 + w)
    rotary_dim = int(head_dim * text_config["rope_parameters"]["partial_rotary_factor"])
    assert within_ulp(q, want_q, rotary_dim).all()
    assert within_ulp(k_out, want_k, rotary_dim).all()
    # The gate halves are not touched.
    assert np.array_equal(qg.reshape(TOKENS, Q_HEADS, 2 * head_dim)[:, :, head_dim:], gate)


def hunyuan_reference(q, k, positions, q_weight, k_weight, config_json):
    """HunYuanVLDenseV1Attention.forward's statements from the projections through the q/k
    norms (rotary, apply_rotary_pos_emb, query_layernorm, key_layernorm), [T, H, D], with its
    float32 cos/sin evaluated in double (mrope's values: the rotary's own ulps are
    test_reference_rotary.py's; here the norm of the rotated head is checked)."""
    torch = pytest.importorskip("torch")
    modeling = pytest.importorskip("transformers.models.hunyuan_vl.modeling_hunyuan_vl")
    from reference_runner_rotary import cos_sin_in_double
    from transformers.models.hunyuan_vl.configuration_hunyuan_vl import HunYuanVLTextConfig
    head_dim = config_json["head_dim"]
    config = HunYuanVLTextConfig(
        hidden_size=Q_HEADS * head_dim, num_attention_heads=Q_HEADS,
        num_key_value_heads=KV_HEADS, head_dim=head_dim, rms_norm_eps=1e-5,
        rope_parameters={"rope_type": "default", "rope_theta": config_json["rope_theta"],
                         "mrope_section": config_json["rope_scaling"]["xdrope_section"]})
    q_norm = modeling.HunYuanVLRMSNorm(head_dim, eps=config.rms_norm_eps)
    k_norm = modeling.HunYuanVLRMSNorm(head_dim, eps=config.rms_norm_eps)
    with torch.no_grad():
        q_norm.weight.copy_(torch.from_numpy(q_weight))
        k_norm.weight.copy_(torch.from_numpy(k_weight))
        query = torch.from_numpy(q)[None].view(1, TOKENS, -1, head_dim).transpose(1, 2)
        key = torch.from_numpy(k)[None].view(1, TOKENS, -1, head_dim).transpose(1, 2)
        rotary = modeling.HunYuanVLRotaryEmbedding(config)
        with cos_sin_in_double():
            cos, sin = rotary(query, torch.from_numpy(positions)[:, None])
        query, key = modeling.apply_rotary_pos_emb(query, key, cos, sin)
        query, key = q_norm(query), k_norm(key)
    return query[0].transpose(0, 1).numpy(), key[0].transpose(0, 1).numpy()


def test_hunyuan_vl_xd_rope_then_the_norm_of_the_rotated_head():
    with open(os.path.join(golden.REPO_DIR, HUNYUAN_CONFIG)) as f:
        config_json = json.load(f)
    model = mrope.Model.from_config(os.path.join(golden.REPO_DIR, HUNYUAN_CONFIG))
    head_dim = config_json["head_dim"]
    rng = np.random.default_rng(37)
    q = rng.standard_normal((TOKENS, Q_HEADS * head_dim)).astype(np.float32)
    k = rng.standard_normal((TOKENS, KV_HEADS * head_dim)).astype(np.float32)
    v = rng.standard_normal((TOKENS, KV_HEADS * head_dim)).astype(np.float32)
    q_weight = rng.uniform(0.5, 1.5, head_dim).astype(np.float32)
    k_weight = rng.uniform(0.5, 1.5, head_dim).astype(np.float32)
    # Four rows as HunYuan-VL's get_rope_index gives them: every token its index on row 0, an
    # image's grid tokens (column, row, image ordinal) on rows 1-3, text its index on all.
    index = np.arange(TOKENS)
    grid = slice(3, 11)
    positions = np.stack([index] * 4).astype(np.int64)
    positions[1, grid] = np.tile(np.arange(4), 2)
    positions[2, grid] = np.repeat(np.arange(2), 4)
    positions[3, grid] = 0
    want_q, want_k = hunyuan_reference(q, k, positions, q_weight, k_weight, config_json)
    rotated_only = q.reshape(TOKENS, Q_HEADS, head_dim).copy()
    mc.apply_mrope_(rotated_only, k.reshape(TOKENS, KV_HEADS, head_dim).copy(), positions, model)
    q_rotated = q.reshape(TOKENS, Q_HEADS, head_dim)
    k_out = np.empty((TOKENS, KV_HEADS, head_dim), np.float32)
    mc.fused_mrope_(q_rotated, k.reshape(TOKENS, KV_HEADS, head_dim), v, positions, model,
                    k_out=k_out, q_norm_weight=q_weight, k_norm_weight=k_weight,
                    eps=1e-5)  # the norm form: the family's, of the rotated head
    for ours, want, weight in ((q_rotated, want_q, q_weight), (k_out, want_k, k_weight)):
        # Pair magnitudes of the rotated, normalised head, then each element's weight.
        unweighted = want / weight
        half = head_dim // 2
        pair = np.hypot(unweighted[..., :half], unweighted[..., half:])
        scale = np.concatenate([pair, pair], axis=-1) * weight
        assert (np.abs(ours - want) <= MAX_ULP * np.spacing(scale)).all(), (
            np.max(np.abs(ours - want) / np.spacing(scale)))
    # The rotation alone differs: the norm was applied too.
    assert not np.allclose(q_rotated, rotated_only, atol=1e-3)
