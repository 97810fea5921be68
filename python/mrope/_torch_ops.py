"""mrope.cuda's ops as torch custom ops (torch.library, torch >= 2.4): declared mutations
and fake implementations, so torch.compile and CUDA-graph capture trace them. Imported by
mrope.cuda when torch is installed; the launch itself is mrope._launch's, on torch's current
stream."""
from typing import Optional

import torch

from mrope import _launch

if not hasattr(torch.library, "custom_op"):
    raise ImportError("torch.library.custom_op needs torch >= 2.4")

Tensor = torch.Tensor


def is_tensor(value):
    return isinstance(value, torch.Tensor)


def _stream(tensor):
    return torch.cuda.current_stream(tensor.device).cuda_stream if tensor.is_cuda else 0


@torch.library.custom_op("mrope::apply_mrope_", mutates_args=("q", "k", "error_flag"))
def _apply_mrope(q: Tensor, k: Tensor, positions: Tensor, model_key: str, seq_len: int,
                 sincos_math: str, cos_sin_cache: Optional[Tensor], error_flag: Tensor,
                 inverse: bool = False) -> None:
    _launch.launch_mrope(q, k, positions, _launch.source_of_key(model_key), seq_len,
                        sincos_math, cos_sin_cache, error_flag, _stream(q), inverse)


@_apply_mrope.register_fake
def _(q, k, positions, model_key, seq_len, sincos_math, cos_sin_cache, error_flag,
      inverse=False):
    return None


@torch.library.custom_op(
    "mrope::fused_mrope_",
    mutates_args=("q", "k", "error_flag", "q_out", "k_out", "k_cache", "v_cache"))
def _fused_mrope(q: Tensor, k: Tensor, v: Tensor, positions: Tensor, model_key: str,
                 seq_len: int, sincos_math: str, cos_sin_cache: Optional[Tensor],
                 error_flag: Tensor, q_out: Optional[Tensor], q_scale: Optional[Tensor],
                 k_out: Optional[Tensor], q_norm_weight: Optional[Tensor],
                 k_norm_weight: Optional[Tensor], slot_mapping: Optional[Tensor],
                 k_cache: Optional[Tensor], v_cache: Optional[Tensor],
                 k_scale: Optional[Tensor], v_scale: Optional[Tensor], norm: str, eps: float,
                 cache_layout: str, inverse: bool = False) -> None:
    _launch.launch_fused(q, k, v, positions, _launch.source_of_key(model_key), seq_len,
                        sincos_math, cos_sin_cache, error_flag, _stream(q), q_out, q_scale,
                        k_out, q_norm_weight, k_norm_weight, norm, eps, slot_mapping, k_cache,
                        v_cache, cache_layout, k_scale, v_scale, inverse)


@_fused_mrope.register_fake
def _(q, k, v, positions, model_key, seq_len, sincos_math, cos_sin_cache, error_flag, q_out,
      q_scale, k_out, q_norm_weight, k_norm_weight, slot_mapping, k_cache, v_cache, k_scale,
      v_scale, norm, eps, cache_layout, inverse=False):
    return None


apply_mrope_ = torch.ops.mrope.apply_mrope_
fused_mrope_ = torch.ops.mrope.fused_mrope_
