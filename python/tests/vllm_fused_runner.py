"""The vLLM plugin's fused prologue (mrope/integrations/_vllm_fused.py, qk_norm_rope: one
fused_mrope_ launch) on the host-harness kernels, against the eager path it replaces: the
per-head RMSNorm (x * r * w for Qwen3-VL, x * r * (1 + w) for Qwen3.5), then the plugin's
rotation (mrope's cos/sin). Started by test_vllm_fused_host.py in a process with the pinned
vLLM (the module imports vLLM's Qwen3-VL and Qwen3.5 classes) and the host package.

stdout: pickle [(norm, max |fused - eager| of q, of k, error flag)].
"""
import pickle
import sys
import types

import torch

import mrope.cuda
from mrope.integrations import _common
from mrope.integrations import _vllm_fused

# (norm, rotary_dim, mrope_section): Qwen3-VL-8B's text layer and Qwen3.5's (a quarter of 256).
CASES = (("weight", 128, 128, [24, 20, 20]), ("one_plus_weight", 256, 64, [11, 11, 10]))


def run(norm, head_dim, rotary_dim, sections, tokens=7, q_heads=4, kv_heads=2):
    model, why = _common.rotary_model(head_dim, rotary_dim, 5e6, True, sections, True)
    assert why is None, why
    weights = [torch.randn(head_dim) for _ in range(2)]
    layer = types.SimpleNamespace(
        rotary_emb=types.SimpleNamespace(mrope_key=mrope.cuda.model_key(model),
                                         mrope_error_flag=torch.zeros(1, dtype=torch.int32)),
        q_norm=types.SimpleNamespace(weight=weights[0], variance_epsilon=1e-6),
        k_norm=types.SimpleNamespace(weight=weights[1], variance_epsilon=1e-6))
    sizes = [q_heads * head_dim, kv_heads * head_dim, kv_heads * head_dim]
    qkv = torch.randn(tokens, sum(sizes))
    positions = torch.randint(0, 4096, (3, tokens))
    q, k, v = qkv.clone().split(sizes, dim=-1)  # views of one buffer, as vLLM's
    _vllm_fused.qk_norm_rope(layer, q, k, v, positions, norm)

    def eager(x, weight):
        heads = x.reshape(tokens, -1, head_dim)
        scale = weight if norm == "weight" else 1 + weight
        heads = heads * torch.rsqrt(heads.pow(2).mean(-1, keepdim=True) + 1e-6) * scale
        return _common.rotate_on_cpu(model, positions, heads.reshape(tokens, -1).contiguous(),
                                     head_dim, rotary_dim, True)

    q0, k0, _ = qkv.split(sizes, dim=-1)
    return (norm, float((q - eager(q0, weights[0])).abs().max()),
            float((k - eager(k0, weights[1])).abs().max()),
            int(layer.rotary_emb.mrope_error_flag[0]))


if __name__ == "__main__":
    torch.manual_seed(0)
    pickle.dump([run(*case) for case in CASES], sys.stdout.buffer)
