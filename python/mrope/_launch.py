"""mrope.cuda's launch layer: C ABI handles of models and rotaries (made once, kept), tensors
read into the launch structs (checked for one device), and the two launches. Below mrope.cuda's
public functions and the torch modules (custom ops, autograd), which all call it."""
import collections
import ctypes
import hashlib
import os
import sys
import threading

from mrope import _arrays
from mrope import _capi

# Decode positions without a [3, T] tensor: token i takes token_index[i] + delta[seq_id[i]] on
# every axis (int64 [T], int64 [S], int32 [T] or None: token i is sequence i), e.g. the
# requests' mrope_position_deltas; kernels/mrope_kernel_args.h, SequenceDeltaPositions.
Decode = collections.namedtuple("Decode", "token_index delta seq_id", defaults=(None,))

STORAGE = {"float32": _capi.FLOAT32, "bfloat16": _capi.BFLOAT16, "float16": _capi.FLOAT16}
FP8 = ("float8_e4m3", "uint8")
SINCOS = {"double": 0, "float32": 1}
NORMS = {"weight": 1, "one_plus_weight": 2, "weight_after_rotary": 3}  # mrope_qk_norm_form

_lock = threading.Lock()
_models = {}    # source -> (C model handle, key)
_keys = {}      # key -> source (the torch ops name models by key)
_rotaries = {}  # (source, seq_len, sincos_math) -> (C rotary handle, RotaryInfo)
_flags = {}     # (framework, device) -> default error flag


def model_source(model):
    """What a model was made from: mrope.Model's own source, or a preset name / path."""
    source = getattr(model, "_source", None)
    if source is not None:
        return source
    if isinstance(model, (str, os.PathLike)):
        return ("load", os.fspath(model), None)
    raise ValueError(f"model: expected an mrope.Model or a preset name / config path, got "
                     f"{type(model).__name__}")


def model_handle(source):
    with _lock:
        if source in _models:
            return _models[source][0]
    kind, name, detail = source
    handle = ctypes.c_void_p()
    if kind == "layer_type":  # mrope.Model.for_layer_type(name) of the model made from detail
        _capi.call("mrope_model_for_layer_type", model_handle(detail), name.encode(),
                   ctypes.byref(handle))
    elif kind == "config":
        text = detail.encode()
        _capi.call("mrope_model_from_config_text", name.encode(), text, len(text),
                   ctypes.byref(handle))
    elif detail is not None:
        _capi.call("mrope_model_with_overrides", name.encode(), detail.encode(),
                   ctypes.byref(handle))
    else:
        _capi.call("mrope_model_load", name.encode(), ctypes.byref(handle))
    key = hashlib.sha256(repr(source).encode()).hexdigest()[:24]
    with _lock:
        if source in _models:  # another thread made it meanwhile
            _capi.library().mrope_model_free(handle)
        else:
            _models[source] = (handle, key)
            _keys[key] = source
        return _models[source][0]


def family_norm(source, norm, weighted):
    """The norm form to apply: `norm` as given, else (norm None) the model's family's (its
    row's, mrope_model_info.qk_norm), which weights need; "weight" where no weight is given."""
    if norm is not None or not weighted:
        return "weight" if norm is None else norm
    info = _capi.new(_capi.ModelInfo)
    _capi.call("mrope_model_get_info", model_handle(source), ctypes.byref(info))
    for name, form in NORMS.items():
        if form == info.qk_norm:
            return name
    raise ValueError(f"norm: {info.family.decode()}'s attention has no q/k norm; give norm="
                     f"one of {sorted(NORMS)} to normalise with q_norm_weight / "
                     f"k_norm_weight")


def rotary_of(source, seq_len, sincos_math):
    """(handle, RotaryInfo) of the model's rotary at seq_len, made once."""
    if sincos_math not in SINCOS:
        raise ValueError(f"sincos_math: expected 'double' or 'float32', got {sincos_math!r}")
    key = (source, int(seq_len), sincos_math)
    with _lock:
        if key in _rotaries:
            return _rotaries[key]
    model = model_handle(source)
    handle = ctypes.c_void_p()
    _capi.call("mrope_rotary_create", model, int(seq_len), SINCOS[sincos_math],
               ctypes.byref(handle))
    info = _capi.new(_capi.RotaryInfo)
    _capi.call("mrope_rotary_get_info", handle, ctypes.byref(info))
    with _lock:
        if key in _rotaries:
            _capi.library().mrope_rotary_free(handle)
        else:
            _rotaries[key] = (handle, info)
        return _rotaries[key]


def stream_of(stream, like):
    """The cudaStream_t to launch on: `stream` as given, else the current stream of `like`'s
    framework (torch, CuPy), else 0 (the legacy default stream)."""
    if stream is not None:
        for attribute in ("cuda_stream", "ptr"):
            if hasattr(stream, attribute):
                return int(getattr(stream, attribute))
        return int(stream)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(like, torch.Tensor) and like.is_cuda:
        return torch.cuda.current_stream(like.device).cuda_stream
    if type(like).__module__.startswith("cupy"):
        return sys.modules["cupy"].cuda.get_current_stream().ptr
    return 0


def error_flag(like):
    """The default error flag (a zeroed int32 tensor of one element) of ``like``'s framework
    and device: torch or CuPy on a GPU; numpy with the host-harness test library."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(like, torch.Tensor):
        key = ("torch", str(like.device))
        make = lambda: torch.zeros(1, dtype=torch.int32, device=like.device)  # noqa: E731
    elif type(like).__module__.startswith("cupy"):
        cupy = sys.modules["cupy"]
        key = ("cupy", like.device.id)
        make = lambda: cupy.zeros(1, dtype=cupy.int32)  # noqa: E731 (like's current device)
    elif type(like).__module__ == "numpy" and _capi.kernels_on_host():
        numpy = sys.modules["numpy"]
        key = ("numpy", 0)
        make = lambda: numpy.zeros(1, dtype=numpy.int32)  # noqa: E731
    else:
        raise ValueError(f"error_flag: mrope has no default flag for {type(like).__name__}; "
                         f"pass a device int32 tensor of one element")
    with _lock:
        if key not in _flags:
            _flags[key] = make()
        return _flags[key]



class Launch:
    """One launch's arguments read from tensors, checked for one device."""

    def __init__(self, stream):
        self.stream = stream
        self.device = None
        self.keep = []
        self.on_host = _capi.kernels_on_host()

    def read(self, obj, name, writable=False):
        array = _arrays.read(obj, name, self.stream, writable)
        kind, index = array.device
        if not self.on_host and kind != "cuda":
            raise ValueError(f"{name}: expected a CUDA tensor, got one on {kind}")
        if self.on_host and kind == "cuda" and index is not None:
            raise ValueError(f"{name}: this mrope library runs the kernels on the CPU "
                             f"(MROPE_C_LIBRARY={_capi.library()._name}); got a CUDA tensor")
        if index is not None:
            if self.device is not None and self.device != array.device:
                raise ValueError(f"{name}: on {kind}:{index}, the other tensors on "
                                 f"{self.device[0]}:{self.device[1]}")
            self.device = array.device
        self.keep.append(array.keep)
        return array

    def heads(self, obj, name, head_dim, dtypes=STORAGE):
        """[T, H, D] or [T, H * D] (vLLM's flat q / k) with a contiguous last dimension."""
        a = self.read(obj, name, writable=True)
        if a.dtype not in dtypes:
            raise ValueError(f"{name}: dtype {a.dtype}, expected one of {', '.join(dtypes)}")
        if len(a.shape) == 3 and a.shape[2] == head_dim and a.strides[2] == 1:
            num_heads, token_stride, head_stride = a.shape[1], a.strides[0], a.strides[1]
        elif len(a.shape) == 2 and a.shape[1] % head_dim == 0 and a.strides[1] == 1:
            num_heads, token_stride, head_stride = a.shape[1] // head_dim, a.strides[0], head_dim
        else:
            raise ValueError(f"{name}: expected [tokens, heads, {head_dim}] or [tokens, heads "
                             f"* {head_dim}] with a contiguous last dimension, got shape "
                             f"{a.shape} strides {a.strides}")
        dtype = _capi.FLOAT8_E4M3 if a.dtype in FP8 else STORAGE[a.dtype]
        return _capi.HeadsView(data=a.ptr, dtype=dtype, num_heads=num_heads, head_dim=head_dim,
                               num_tokens=a.shape[0], token_stride=token_stride,
                               head_stride=head_stride)

    def position_source(self, args, obj, info):
        """Sets args.positions ([num_axes, T] or [T] tensor) or args.sequence_delta (Decode)
        for the rotary `info` describes."""
        if not isinstance(obj, Decode):
            args.positions = self.positions(obj, info.num_axes)
            return
        token_index, tokens = self.flat(obj.token_index, "positions.token_index", "int64")
        delta, sequences = self.flat(obj.delta, "positions.delta", "int64")
        seq_id = None
        if obj.seq_id is not None:
            seq_id = self.flat(obj.seq_id, "positions.seq_id", "int32", tokens)[0]
        args.sequence_delta = _capi.SequenceDelta(token_index=token_index, delta=delta,
                                                  seq_id=seq_id, num_tokens=tokens,
                                                  num_seqs=sequences)

    def positions(self, obj, num_axes):
        """[num_axes, T] (t, h, w rows for three axes; HunYuan-VL's XD-RoPE rows for more), for
        three axes also [4, T] (transformers 5.x's [text; t; h; w]: the text row is skipped, as
        its text models do), or [T] (one row for every axis), int32 or int64."""
        a = self.read(obj, "positions")
        if a.dtype not in ("int32", "int64"):
            raise ValueError(f"positions: dtype {a.dtype}, expected int32 or int64")
        data = a.ptr
        rows = (3, 4) if num_axes == 3 else (num_axes,)
        if len(a.shape) == 2 and a.shape[0] in rows and a.strides[1] == 1:
            axis_stride = a.strides[0]
            if a.shape[0] == num_axes + 1:
                data += axis_stride * _arrays.itemsize(a.dtype)
        elif len(a.shape) == 1 and a.strides[0] == 1:
            axis_stride = 0
        else:
            shapes = " or ".join(f"[{n}, tokens]" for n in rows)
            raise ValueError(f"positions: expected {shapes} or [tokens] with contiguous rows "
                             f"(the model's rotary reads {num_axes} axes), got shape {a.shape} "
                             f"strides {a.strides}")
        return _capi.PositionsView(data=data, is_int64=a.dtype == "int64",
                                   num_tokens=a.shape[-1], axis_stride=axis_stride)

    def table(self, obj, info):
        """vLLM's cos_sin_cache [max_position, rotary_dim] fp32: cos halves, then sin."""
        if obj is None:
            return _capi.CosSinTable()
        a = self.read(obj, "cos_sin_cache")
        if (a.dtype != "float32" or len(a.shape) != 2 or a.shape[1] != info.rotary_dim or
                a.strides[1] != 1):
            raise ValueError(f"cos_sin_cache: expected float32 [max_position, "
                             f"{info.rotary_dim}] with contiguous rows, got {a.dtype} "
                             f"{a.shape}")
        return _capi.CosSinTable(cos=a.ptr, sin=a.ptr + info.num_pairs * 4,
                                 max_position=a.shape[0], row_stride=a.strides[0])

    def small_tensor(self, obj, name, dtype, sizes=(1,)):
        """(pointer, element count) of a flag or scale tensor of one of `sizes` elements."""
        a = self.read(obj, name, writable=name == "error_flag")
        count = 1
        for size in a.shape:
            count *= size
        if a.dtype != dtype or count not in sizes or (count > 1 and a.strides[-1] != 1):
            raise ValueError(f"{name}: expected a contiguous {dtype} tensor of "
                             f"{' or '.join(map(str, sizes))} elements, got {a.dtype} "
                             f"{a.shape}")
        return a.ptr, count

    def flat(self, obj, name, dtype, length=None):
        """(pointer, length) of a contiguous 1-D tensor (of `length` elements, if given)."""
        a = self.read(obj, name)
        if (a.dtype != dtype or len(a.shape) != 1 or a.strides != (1,) or
                length not in (None, a.shape[0])):
            raise ValueError(f"{name}: expected a contiguous {dtype} [{length or 'n'}] tensor, "
                             f"got {a.dtype} {a.shape}")
        return a.ptr, a.shape[0]


def direction(inverse):
    if inverse not in (True, False):
        raise ValueError(f"inverse: expected True or False, got {inverse!r}")
    return _capi.INVERSE if inverse else _capi.FORWARD


def rotary_launch(struct, q, k, positions, source, seq_len, sincos_math, cos_sin_cache, flag,
                  stream, inverse):
    """What both launches share: (rotary handle, RotaryInfo, Launch, args of `struct`) with q,
    k, the position and cos/sin sources, the direction and the error flag set."""
    rotary, info = rotary_of(source, seq_len, sincos_math)
    launch = Launch(stream)
    args = _capi.new(struct, direction=direction(inverse))
    args.q = launch.heads(q, "q", info.head_dim)
    args.k = launch.heads(k, "k", info.head_dim)
    launch.position_source(args, positions, info)
    args.table = launch.table(cos_sin_cache, info)
    flag = error_flag(q) if flag is None else flag
    args.error_flag = launch.small_tensor(flag, "error_flag", "int32")[0]
    return rotary, info, launch, args


def launch_mrope(q, k, positions, source, seq_len, sincos_math, cos_sin_cache, flag, stream,
                 inverse=False):
    # `launch` holds what the arrays' pointers need alive until the call returns.
    rotary, _, launch, args = rotary_launch(_capi.KernelArgs, q, k, positions, source, seq_len,
                                            sincos_math, cos_sin_cache, flag, stream, inverse)
    _capi.call("mrope_launch_kernel", rotary, ctypes.byref(args), stream)
    del launch


def launch_fused(q, k, v, positions, source, seq_len, sincos_math, cos_sin_cache, flag,
                 stream, q_out, q_scale, k_out, q_norm_weight, k_norm_weight, norm, eps,
                 slot_mapping, k_cache, v_cache, cache_layout, k_scale, v_scale,
                 inverse=False):
    rotary, info, launch, args = rotary_launch(_capi.FusedArgs, q, k, positions, source,
                                               seq_len, sincos_math, cos_sin_cache, flag,
                                               stream, inverse)
    args.v = launch.heads(v, "v", info.head_dim)
    if q_out is not None:
        args.q_out = launch.heads(q_out, "q_out", info.head_dim,
                                  dtypes=tuple(STORAGE) + FP8)
    if q_scale is not None:
        args.q_scale = launch.small_tensor(q_scale, "q_scale", "float32")[0]
    if k_out is not None:
        args.k_out = launch.heads(k_out, "k_out", info.head_dim)
    if norm not in NORMS:
        raise ValueError(f"norm: expected one of {sorted(NORMS)}, got {norm!r}")
    for weight, name, field in ((q_norm_weight, "q_norm_weight", "q_norm"),
                                (k_norm_weight, "k_norm_weight", "k_norm")):
        if weight is None:
            continue
        a = launch.read(weight, name)
        if a.dtype not in STORAGE or a.shape != (info.head_dim,) or a.strides != (1,):
            raise ValueError(f"{name}: expected a contiguous [{info.head_dim}] fp32/bf16/fp16 "
                             f"tensor, got {a.dtype} {a.shape}")
        setattr(args, field, _capi.QkNorm(form=NORMS[norm], weight_dtype=STORAGE[a.dtype],
                                          weight=a.ptr, eps=eps))
    if slot_mapping is not None:
        args.slot_mapping = launch.flat(slot_mapping, "slot_mapping", "int64",
                                        args.q.num_tokens)[0]
        args.cache = paged_cache(launch, k_cache, v_cache, cache_layout, k_scale, v_scale,
                                 info.head_dim)
    _capi.call("mrope_launch_fused_kernel", rotary, ctypes.byref(args), stream)


def paged_cache(launch, k_cache, v_cache, layout, k_scale, v_scale, head_dim):
    """A paged cache from k_cache / v_cache [blocks, block_size, H, D] (NHD) or
    [blocks, H, block_size, D] (HND), sharing shape, strides and dtype."""
    if k_cache is None or v_cache is None:
        raise ValueError("k_cache, v_cache: both are required with slot_mapping")
    if layout not in ("NHD", "HND"):
        raise ValueError(f"cache_layout: expected 'NHD' or 'HND', got {layout!r}")
    k = launch.read(k_cache, "k_cache", writable=True)
    v = launch.read(v_cache, "v_cache", writable=True)
    if len(k.shape) != 4 or k.shape[3] != head_dim or k.strides[3] != 1:
        raise ValueError(f"k_cache: expected [blocks, ..., {head_dim}] with a contiguous last "
                         f"dimension, got shape {k.shape} strides {k.strides}")
    if (v.shape, v.strides, v.dtype) != (k.shape, k.strides, k.dtype):
        raise ValueError(f"v_cache: shape {v.shape}, strides {v.strides}, dtype {v.dtype} "
                         f"differ from k_cache's {k.shape}, {k.strides}, {k.dtype}")
    slot_dim, head_dim_index = (1, 2) if layout == "NHD" else (2, 1)
    if k.dtype in FP8:
        dtype = _capi.FLOAT8_E4M3
    elif k.dtype in STORAGE:
        dtype = STORAGE[k.dtype]
    else:
        raise ValueError(f"k_cache: dtype {k.dtype} is not supported")
    cache = _capi.PagedKvCache(k=k.ptr, v=v.ptr, dtype=dtype, block_size=k.shape[slot_dim],
                               num_heads=k.shape[head_dim_index], head_dim=head_dim,
                               num_blocks=k.shape[0], block_stride=k.strides[0],
                               slot_stride=k.strides[slot_dim],
                               head_stride=k.strides[head_dim_index])
    counts = set()
    for scale, name in ((k_scale, "k_scale"), (v_scale, "v_scale")):
        if scale is not None:
            ptr, count = launch.small_tensor(scale, name, "float32", (1, cache.num_heads))
            setattr(cache, name, ptr)
            counts.add(count)
    if len(counts) > 1:
        raise ValueError("k_scale, v_scale: give both per tensor ([1]) or both per head ([H])")
    cache.per_head_scale = cache.num_heads > 1 and counts == {cache.num_heads}
    return cache


def model_key(model):
    """The name the torch ops take for ``model`` (its C ABI handle is made here, once). Inside
    torch.compile'd code call the ops with it:
    ``torch.ops.mrope.apply_mrope_(q, k, positions, key, seq_len, "double", None, flag)``."""
    source = model_source(model)
    model_handle(source)
    with _lock:
        return _models[source][1]


def source_of_key(key):
    with _lock:
        return _keys[key]
