"""The vLLM architectures of mrope's fused part (mrope.integrations.vllm, MROPE_VLLM=fused):
vLLM's Qwen3-VL and Qwen3.5 model classes whose attention layers run QK-RMSNorm + M-RoPE as
one mrope.cuda.fused_mrope_ launch (q in place, k in place; the KV append stays vLLM's
attention backend's). Registered over vLLM's (ModelRegistry) on CUDA platforms only; a layer
whose rotary is not mrope's keeps vLLM's forward."""
import types

import torch
from mrope.integrations import _common
from vllm.model_executor.models import qwen3_5
from vllm.model_executor.models import qwen3_vl
from vllm.model_executor.models import qwen3_vl_moe
from vllm.model_executor.models.qwen3 import Qwen3Attention
from vllm.model_executor.models.qwen3_next import Qwen3NextAttention


def qk_norm_rope(layer, q, k, v, positions, norm):
    """q, k ([T, H * D] views) normalised per head by the layer's q_norm / k_norm weights and
    rotated by its mrope rotary, in place, in one launch."""
    torch.ops.mrope.fused_mrope_(
        q, k, v, positions, layer.rotary_emb.mrope_key, 1, _common.SINCOS_MATH, None,
        layer.rotary_emb.mrope_error_flag, None, None, k, layer.q_norm.weight,
        layer.k_norm.weight, None, None, None, None, None, norm,
        float(layer.q_norm.variance_epsilon), "NHD", False)
    return q, k


def _qwen3_forward(self, positions, hidden_states):
    """Qwen3Attention.forward with the fused prologue (Qwen3-VL: x * r * w)."""
    qkv, _ = self.qkv_proj(hidden_states)
    q, k, v = qkv.split([self.q_size, self.kv_size, self.kv_size], dim=-1)
    q, k = qk_norm_rope(self, q, k, v, positions, "weight")
    output, _ = self.o_proj(self.attn(q, k, v))
    return output


def _qwen3_next_project(self, qkv, positions):
    """Qwen3NextAttention._project_qkv_gate with the fused prologue (Qwen3.5: x * r * (1 + w));
    the gate is the second half of each head's q_gate slice."""
    q_gate, k, v = qkv.split([self.q_size * 2, self.kv_size, self.kv_size], dim=-1)
    heads = q_gate.view(-1, self.num_heads, 2 * self.head_dim)
    q = heads[..., :self.head_dim].contiguous().view(-1, self.q_size)
    gate = heads[..., self.head_dim:].reshape(-1, self.q_size)
    q, k = qk_norm_rope(self, q, k, v, positions, "one_plus_weight")
    return q, k, v, gate


def _fuse(model):
    """Binds the fused prologue to every attention layer of `model` whose rotary is mrope's."""
    for module in model.modules():
        if getattr(getattr(module, "rotary_emb", None), "mrope_key", None) is None:
            continue
        if isinstance(module, Qwen3Attention):
            module.forward = types.MethodType(_qwen3_forward, module)
        elif isinstance(module, Qwen3NextAttention) and module.attn_output_gate:
            module._project_qkv_gate = types.MethodType(_qwen3_next_project, module)


def _fused(base):
    class Fused(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            _fuse(self)

    Fused.__name__ = Fused.__qualname__ = base.__name__
    return Fused


Qwen3VLForConditionalGeneration = _fused(qwen3_vl.Qwen3VLForConditionalGeneration)
Qwen3VLMoeForConditionalGeneration = _fused(qwen3_vl_moe.Qwen3VLMoeForConditionalGeneration)
Qwen3_5ForConditionalGeneration = _fused(qwen3_5.Qwen3_5ForConditionalGeneration)
Qwen3_5MoeForConditionalGeneration = _fused(qwen3_5.Qwen3_5MoeForConditionalGeneration)
