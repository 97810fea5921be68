"""mrope.cuda: mrope's CUDA kernels on any framework's tensors, through the C ABI (ctypes).

    import mrope, mrope.cuda
    model = mrope.Model.from_config("qwen2_5_vl")      # or a preset name / config path
    q, k = qkv[:, :q_size], qkv[:, q_size:q_size + kv_size]   # views, [T, H * D] or [T, H, D]
    mrope.cuda.apply_mrope_(q, k, positions, model)   # positions [3, T] int32/int64 (or [T])

Tensors: torch tensors, or anything with ``__cuda_array_interface__`` or ``__dlpack__`` (CuPy,
JAX, numba), on one CUDA device; q and k are rotated in place (views of a fused qkv buffer
are fine: only the last dimension must be contiguous). Launches go on the framework's current
stream (torch, CuPy) unless ``stream`` is given (an int cudaStream_t, or an object with
``cuda_stream`` / ``ptr``), without synchronising the host or allocating, so the calls can be
captured in CUDA graphs (create the default error flag, ``error_flag(q)``, before capturing).
Bad arguments raise ValueError naming the argument before anything is enqueued.

Device-side errors (a position outside [0, 2^24) or outside ``cos_sin_cache``, a sequence id or
cache slot out of range) skip the token and OR ``ERROR_*`` bits into the error flag: the
``error_flag`` argument (a device int32 tensor of one element, zeroed by you), or the default
one of the tensor's framework and device, ``error_flag(q)``. Reading it (``int(flag[0])``)
synchronises; do it when convenient.

For training, ``apply_mrope`` (out of place) is differentiable with torch tensors: its
backward is the inverse rotation (``inverse=True`` on the in-place ops; the fused op's norm
has no backward).

With torch >= 2.4, both ops are also torch custom ops (``torch.ops.mrope.apply_mrope_``,
``torch.ops.mrope.fused_mrope_``, with fake implementations and declared mutations), and torch
tensors go through them (torch < 2.4 has no ``torch.library.custom_op``:
its tensors take the DLPack path, and ``apply_mrope``'s autograd works with any torch); inside ``torch.compile``'d code call ``torch.ops.mrope.*`` with
``model_key(model)`` (the Python wrappers themselves hold a lock and are not traced).

``available()`` says whether this build carries the kernels (a CPU wheel, built without nvcc,
does not) and for which GPUs: ``(ok, message)``.

The library is ``libmrope_c.so`` in this package (or ``$MROPE_C_LIBRARY``), called through
ctypes: this module needs neither the compiled position extension nor torch (imported only to
register the custom ops when installed), so it runs on any CPython >= 3.9.
"""
import collections as _collections
import ctypes as _ctypes

from mrope import _capi
from mrope import _launch

__all__ = ["available", "apply_mrope_", "apply_mrope", "fused_mrope_", "Decode", "cos_sin",
           "error_flag",
           "model_key", "ERROR_POSITION_OUT_OF_RANGE",
           "ERROR_SEQUENCE_OUT_OF_RANGE", "ERROR_SLOT_OUT_OF_RANGE"]

ERROR_POSITION_OUT_OF_RANGE = _capi.ERROR_POSITION_OUT_OF_RANGE
ERROR_SEQUENCE_OUT_OF_RANGE = _capi.ERROR_SEQUENCE_OUT_OF_RANGE
ERROR_SLOT_OUT_OF_RANGE = _capi.ERROR_SLOT_OUT_OF_RANGE

Decode = _launch.Decode
error_flag = _launch.error_flag
model_key = _launch.model_key

_Availability = _collections.namedtuple("Availability", "ok message")


def available():
    """``Availability(ok, message)``: whether this build carries mrope's kernels, and which.

    A CPU wheel (built without nvcc) says so and ``ok`` is False; a CUDA wheel names its CUDA
    version, the GPUs it has code for and its PTX. Whether a GPU is present is the framework's
    question (``torch.cuda.is_available()``).
    """
    try:
        from mrope import _build  # written into wheels by python/wheel.py
    except ImportError:
        _build = None  # the Bazel build of the tests
    if _build is not None and _build.CUDA_VERSION is None:
        return _Availability(False, "a CPU wheel of mrope (built without nvcc): mrope.cuda's "
                                   "kernels are not in it; install a +cuXXX wheel for them")
    try:
        on_host = _capi.kernels_on_host()
    except (ImportError, OSError) as e:
        return _Availability(False, str(e))
    if on_host:
        return _Availability(True, "kernels on the host execution harness (a test build)")
    if _build is None:
        return _Availability(True, "CUDA kernels (the archs of third_party/cuda/defs.bzl)")
    archs = ", ".join(f"sm_{a}" for a in _build.CUDA_ARCHS)
    return _Availability(True, f"CUDA {_build.CUDA_VERSION} kernels for {archs}, and PTX for "
                              f"compute_{_build.PTX_ARCH} (newer GPUs)")


def apply_mrope_(q, k, positions, model, *, inverse=False, seq_len=1, sincos_math="double",
                 cos_sin_cache=None, error_flag=None, stream=None):
    """Rotates q and k in place by M-RoPE (kernels/mrope_kernel.h), one launch.

    Args:
        q, k: [T, Hq, D] and [T, Hk, D], or [T, Hq * D] and [T, Hk * D] (vLLM), fp32, bf16
            or fp16 (both the same), D the model's head_dim; dims past rotary_dim untouched.
        positions: [3, T] int32/int64 (t, h, w rows, e.g. Model.get_rope_index's or a
            Plan's), [4, T] as transformers 5.x passes them ([text; t; h; w]: the text row is
            skipped, as its text models do), for a rotary of more axes (HunYuan-VL's XD-RoPE:
            one row per mrope_section entry) [num_axes, T], [T] for text-only batches, or
            Decode(token_index, delta, seq_id) (decode steps: index + the sequence's delta;
            not through the torch ops).
        model: an mrope.Model, or a preset name / config path.
        inverse: rotate by -angle instead: M-RoPE's backward (given the gradients of the
            rotated q and k, gives those of q and k; it undoes the forward within rounding).
        seq_len: the sequence length inv_freq is built for (only dynamic NTK and LongRoPE
            depend on it); one rotary per (model, seq_len) is built and kept.
        sincos_math: "double" (HF's values) or "float32" (faster on GPUs with slow fp64).
        cos_sin_cache: optional fp32 [max_position, rotary_dim] table (vLLM's layout) to read
            cos/sin from instead of computing them.
        error_flag: device int32 [1] the kernel ORs ERROR_* bits into (default:
            error_flag(q)).
        stream: cudaStream_t (int) or a stream object; default the framework's current one.
    """
    source = _launch.model_source(model)
    if (stream is None and _torch_ops is not None and _torch_ops.is_tensor(q) and
            _torch_ops.is_tensor(positions)):
        flag = _launch.error_flag(q) if error_flag is None else error_flag
        _torch_ops.apply_mrope_(q, k, positions, model_key(model), seq_len, sincos_math,
                                cos_sin_cache, flag, inverse)
        return
    _launch.launch_mrope(q, k, positions, source, seq_len, sincos_math, cos_sin_cache,
                         error_flag, _launch.stream_of(stream, q), inverse)


def apply_mrope(q, k, positions, model, *, seq_len=1, sincos_math="double",
                cos_sin_cache=None, error_flag=None):
    """Out of place: returns (rotated q, rotated k), q and k untouched; arguments as
    apply_mrope_'s. With torch tensors it is differentiable (training): the backward rotates
    the gradients by the inverse, apply_mrope_(..., inverse=True); positions get none. Other
    arrays must have ``.copy()`` (numpy, CuPy): their copies are rotated."""
    options = dict(seq_len=seq_len, sincos_math=sincos_math, cos_sin_cache=cos_sin_cache,
                   error_flag=error_flag)
    if _torch_autograd is not None and isinstance(q, _torch_autograd.torch.Tensor):
        return _torch_autograd.apply_mrope(
            q, k, lambda q_, k_, inverse: apply_mrope_(q_, k_, positions, model,
                                                       inverse=inverse, **options))
    if not (hasattr(q, "copy") and hasattr(k, "copy")):
        raise ValueError(f"q, k: apply_mrope copies them (torch tensors, or arrays with "
                         f".copy()), got {type(q).__name__}; use apply_mrope_ in place")
    q_out, k_out = q.copy(), k.copy()
    apply_mrope_(q_out, k_out, positions, model, **options)
    return q_out, k_out


def fused_mrope_(q, k, v, positions, model, *, q_out=None, q_scale=None, k_out=None,
                 q_norm_weight=None, k_norm_weight=None, norm=None, eps=1e-6,
                 slot_mapping=None, k_cache=None, v_cache=None, cache_layout="NHD",
                 k_scale=None, v_scale=None, inverse=False, seq_len=1, sincos_math="double",
                 cos_sin_cache=None, error_flag=None, stream=None):
    """QK-RMSNorm + M-RoPE + q out + paged K/V append, one launch (kernels/fused_kernel.h).

    q, k, v: [T, H, D] or [T, H * D] views (e.g. of the qkv projection), one dtype. q goes
    back into q, or into ``q_out`` (q's dtype, or fp8 e4m3 / uint8 with ``q_scale``, a device
    fp32 [1]). ``q_norm_weight`` / ``k_norm_weight`` ([D]) enable the per-head RMSNorm
    (``norm``: "weight", x * r * w, "one_plus_weight", x * r * (1 + w), or
    "weight_after_rotary", y * r * w of the rotated head y; default None: the model's family's
    form, e.g. Qwen3-VL's "weight", Qwen3.5's and Qwen4-Exp's "one_plus_weight", HunYuan-VL's
    "weight_after_rotary", ValueError for a family without one; ``eps``). With
    ``slot_mapping`` (int64 [T], -1 skips a token), k and v are appended to ``k_cache`` /
    ``v_cache`` ([blocks, block_size, H, D] "NHD" or [blocks, H, block_size, D] "HND"; the
    input dtype or fp8 e4m3 / uint8 with ``k_scale`` / ``v_scale``, device fp32 [1] or [H]).
    ``k_out`` (k's dtype; may be k itself) also receives the normalised, rotated k; without a
    cache it is required. ``inverse``: the rotary's backward, as apply_mrope_'s (without norm
    weights: the norm's backward is not provided). Other arguments as apply_mrope_.
    """
    source = _launch.model_source(model)
    norm = _launch.family_norm(source, norm,
                               q_norm_weight is not None or k_norm_weight is not None)
    tensors = (q_out, q_scale, k_out, q_norm_weight, k_norm_weight, slot_mapping, k_cache,
               v_cache, k_scale, v_scale)
    if (stream is None and _torch_ops is not None and _torch_ops.is_tensor(q) and
            _torch_ops.is_tensor(positions)):
        flag = _launch.error_flag(q) if error_flag is None else error_flag
        _torch_ops.fused_mrope_(q, k, v, positions, model_key(model), seq_len, sincos_math,
                                cos_sin_cache, flag, *tensors, norm, eps, cache_layout,
                                inverse)
        return
    _launch.launch_fused(q, k, v, positions, source, seq_len, sincos_math, cos_sin_cache,
                         error_flag, _launch.stream_of(stream, q), q_out, q_scale, k_out,
                         q_norm_weight, k_norm_weight, norm, eps, slot_mapping, k_cache,
                         v_cache, cache_layout, k_scale, v_scale, inverse)


def cos_sin(positions, model, *, seq_len=1, sincos_math="double"):
    """(cos, sin), numpy float32 [T, rotary_dim / 2], that the kernels use for host positions
    [3, T], [4, T] (text row first, skipped) or [T]: axis map and attention scaling applied
    (mrope_rotary_cos_sin)."""
    import numpy  # only here: the launches need no numpy
    rotary, info = _launch.rotary_of(_launch.model_source(model), seq_len, sincos_math)
    if info.split_halves:
        raise ValueError("cos_sin: the model's XD-RoPE gives a pair's two elements their own "
                         "cos/sin, which [T, rotary_dim / 2] cannot hold; Model.cos_sin gives "
                         "them per element")
    positions = numpy.asarray(positions)
    if positions.ndim == 2 and positions.shape[0] == 4:
        positions = positions[1:]
    positions = numpy.ascontiguousarray(positions)
    if (positions.dtype not in (numpy.int32, numpy.int64) or positions.ndim not in (1, 2) or
            (positions.ndim == 2 and positions.shape[0] != 3)):
        raise ValueError(f"positions: expected int32/int64 [3, T], [4, T] or [T], got "
                         f"{positions.dtype} {positions.shape}")
    tokens = positions.shape[-1]
    view = _capi.PositionsView(data=positions.ctypes.data,
                               is_int64=positions.dtype == numpy.int64, num_tokens=tokens,
                               axis_stride=tokens if positions.ndim == 2 else 0)
    cos = numpy.empty((tokens, info.num_pairs), numpy.float32)
    sin = numpy.empty_like(cos)
    _capi.call("mrope_rotary_cos_sin", rotary, _ctypes.byref(view), cos.ctypes.data,
               sin.ctypes.data, cos.size)
    return cos, sin


try:  # torch custom ops, when torch is importable (mrope/_torch_ops.py)
    from mrope import _torch_ops
except ImportError:
    _torch_ops = None

try:  # apply_mrope's autograd, when torch is importable (mrope/_torch_autograd.py)
    from mrope import _torch_autograd
except ImportError:
    _torch_autograd = None
