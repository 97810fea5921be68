"""Tensors at mrope.cuda's boundary: torch tensors, then ``__cuda_array_interface__``, then
``__dlpack__`` (CuPy, JAX, numba, numpy on the host build), read as pointer, dtype, shape and
strides in elements, without copying and without synchronising the host."""
import collections
import ctypes
import sys

# What mrope.cuda reads: ptr (int), dtype (a name below), shape and strides (elements),
# device ("cpu" or "cuda", index), keep (objects that must live until the launch is enqueued).
Array = collections.namedtuple("Array", "ptr dtype shape strides device keep")

# uint8: fp8 e4m3 bytes, as vLLM stores fp8 KV caches (accepted where fp8 is).
_TORCH_DTYPES = {"float32": "float32", "bfloat16": "bfloat16", "float16": "float16",
                 "float8_e4m3fn": "float8_e4m3", "uint8": "uint8", "int32": "int32",
                 "int64": "int64"}
_CAI_DTYPES = {"<f4": "float32", "<f2": "float16", "|u1": "uint8", "<i4": "int32",
               "<i8": "int64"}
# DLPack (code, bits): kDLInt 0, kDLFloat 2, kDLBfloat 4, kDLFloat8_e4m3fn 10.
_DLPACK_DTYPES = {(2, 32): "float32", (4, 16): "bfloat16", (2, 16): "float16",
                  (10, 8): "float8_e4m3", (1, 8): "uint8", (0, 32): "int32", (0, 64): "int64"}
_ITEMSIZE = {"float32": 4, "bfloat16": 2, "float16": 2, "float8_e4m3": 1, "uint8": 1,
             "int32": 4, "int64": 8}
_DLPACK_CPU, _DLPACK_CUDA, _DLPACK_CUDA_HOST, _DLPACK_CUDA_MANAGED = 1, 2, 3, 13


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def compact_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def _from_torch(tensor, name):
    dtype = _TORCH_DTYPES.get(str(tensor.dtype).replace("torch.", ""))
    if dtype is None:
        raise ValueError(f"{name}: dtype {tensor.dtype} is not supported")
    device = ("cuda", tensor.device.index or 0) if tensor.is_cuda else (tensor.device.type, 0)
    return Array(tensor.data_ptr(), dtype, tuple(tensor.shape), tuple(tensor.stride()), device,
                 (tensor,))


def _from_cai(obj, interface, name, writable):
    dtype = _CAI_DTYPES.get(interface["typestr"])
    if dtype is None:
        raise ValueError(f"{name}: __cuda_array_interface__ typestr {interface['typestr']!r} "
                         f"is not supported (bf16 and fp8 need DLPack or torch)")
    ptr, readonly = interface["data"]
    if writable and readonly:
        raise ValueError(f"{name}: is read-only and mrope writes it")
    shape = tuple(interface["shape"])
    if interface.get("strides") is None:
        strides = compact_strides(shape)
    else:
        itemsize = _ITEMSIZE[dtype]
        if any(s % itemsize for s in interface["strides"]):
            raise ValueError(f"{name}: strides {interface['strides']} are not multiples of "
                             f"the element size {itemsize}")
        strides = tuple(s // itemsize for s in interface["strides"])
    return Array(ptr or 0, dtype, shape, strides, ("cuda", None), (obj,))


def _from_dlpack(obj, name, stream):
    device_type, device_id = obj.__dlpack_device__()
    if device_type in (_DLPACK_CUDA, _DLPACK_CUDA_MANAGED):
        # The producer orders its pending work before `stream` (0, the legacy default
        # stream, is spelled 1 in DLPack); no host synchronisation.
        capsule = obj.__dlpack__(stream=stream or 1)
        device = ("cuda", device_id)
    else:
        capsule = obj.__dlpack__()
        device = ("cpu", device_id)
    tensor = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    dtype = _DLPACK_DTYPES.get((tensor.dtype.code, tensor.dtype.bits))
    if dtype is None or tensor.dtype.lanes != 1:
        raise ValueError(f"{name}: DLPack dtype (code {tensor.dtype.code}, bits "
                         f"{tensor.dtype.bits}, lanes {tensor.dtype.lanes}) is not supported")
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    strides = (tuple(tensor.strides[i] for i in range(tensor.ndim)) if tensor.strides
               else compact_strides(shape))
    ptr = (tensor.data or 0) + tensor.byte_offset
    return Array(ptr, dtype, shape, strides, device, (obj, capsule))


def read(obj, name, stream, writable=False):
    """``obj`` as an Array; ValueError naming ``name`` when it is no tensor mrope can read."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        return _from_torch(obj, name)
    interface = getattr(obj, "__cuda_array_interface__", None)
    if interface is not None:
        return _from_cai(obj, interface, name, writable)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        try:
            return _from_dlpack(obj, name, stream)
        except (BufferError, TypeError, RuntimeError) as error:
            raise ValueError(f"{name}: cannot read it through DLPack ({error})") from error
    raise ValueError(f"{name}: expected a tensor (torch, or an object with __dlpack__ or "
                     f"__cuda_array_interface__), got {type(obj).__name__}")


def itemsize(dtype):
    return _ITEMSIZE[dtype]
