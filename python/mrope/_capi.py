"""ctypes bindings of mrope's C ABI (capi/include/mrope/mrope_c.h), for mrope.cuda.

The structs mirror the header field by field (version 1). The library, loaded on first use:
the extension mrope._mrope when it loaded (it carries the same C ABI: one copy of mrope's C++
code per process, see capi/README.md), else ``$MROPE_C_LIBRARY`` or ``libmrope_c.so`` beside
this file (the wheel ships it: any CPython >= 3.9 runs this without a rebuild).
"""
import ctypes
import os
import sys
import threading

API_VERSION = 1

OK, INVALID_ARGUMENT, UNIMPLEMENTED = 0, 3, 12
FLOAT32, BFLOAT16, FLOAT16, FLOAT8_E4M3 = 0, 1, 2, 3
FORWARD, INVERSE = 0, 1
ERROR_POSITION_OUT_OF_RANGE, ERROR_SEQUENCE_OUT_OF_RANGE, ERROR_SLOT_OUT_OF_RANGE = 1, 2, 4

_c_int64_p = ctypes.POINTER(ctypes.c_int64)


class LibraryInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("api_version", ctypes.c_uint32),
                ("kernels_on_host", ctypes.c_int32)]


class ModelInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("float_positions", ctypes.c_int32),
                ("has_rope", ctypes.c_int32), ("qk_norm", ctypes.c_int32),
                ("name", ctypes.c_char_p), ("family", ctypes.c_char_p),
                ("num_axes", ctypes.c_int32)]


class RotaryInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("head_dim", ctypes.c_int32),
                ("rotary_dim", ctypes.c_int32), ("num_pairs", ctypes.c_int32),
                ("layout", ctypes.c_int32), ("attention_scaling", ctypes.c_float),
                ("num_axes", ctypes.c_int32), ("split_halves", ctypes.c_int32)]


class HeadsView(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32),
                ("num_heads", ctypes.c_int32), ("head_dim", ctypes.c_int32),
                ("reserved", ctypes.c_int32), ("num_tokens", ctypes.c_int64),
                ("token_stride", ctypes.c_int64), ("head_stride", ctypes.c_int64)]


class PositionsView(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("is_int64", ctypes.c_int32),
                ("reserved", ctypes.c_int32), ("num_tokens", ctypes.c_int64),
                ("axis_stride", ctypes.c_int64)]


class SequenceDelta(ctypes.Structure):
    _fields_ = [("token_index", ctypes.c_void_p), ("seq_id", ctypes.c_void_p),
                ("delta", ctypes.c_void_p), ("num_tokens", ctypes.c_int64),
                ("num_seqs", ctypes.c_int64)]


class CosSinTable(ctypes.Structure):
    _fields_ = [("cos", ctypes.c_void_p), ("sin", ctypes.c_void_p),
                ("max_position", ctypes.c_int64), ("row_stride", ctypes.c_int64)]


class KernelArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("reserved", ctypes.c_uint32),
                ("q", HeadsView), ("k", HeadsView), ("positions", PositionsView),
                ("sequence_delta", SequenceDelta), ("table", CosSinTable),
                ("error_flag", ctypes.c_void_p), ("direction", ctypes.c_int32),
                ("reserved2", ctypes.c_int32)]


class QkNorm(ctypes.Structure):
    _fields_ = [("form", ctypes.c_int32), ("weight_dtype", ctypes.c_int32),
                ("weight", ctypes.c_void_p), ("eps", ctypes.c_float),
                ("reserved", ctypes.c_int32)]


class PagedKvCache(ctypes.Structure):
    _fields_ = [("k", ctypes.c_void_p), ("v", ctypes.c_void_p), ("dtype", ctypes.c_int32),
                ("block_size", ctypes.c_int32), ("num_heads", ctypes.c_int32),
                ("head_dim", ctypes.c_int32), ("num_blocks", ctypes.c_int64),
                ("block_stride", ctypes.c_int64), ("slot_stride", ctypes.c_int64),
                ("head_stride", ctypes.c_int64), ("k_scale", ctypes.c_void_p),
                ("v_scale", ctypes.c_void_p), ("per_head_scale", ctypes.c_int32),
                ("reserved", ctypes.c_int32)]


class FusedArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("reserved", ctypes.c_uint32),
                ("q", HeadsView), ("k", HeadsView), ("v", HeadsView), ("q_out", HeadsView),
                ("q_scale", ctypes.c_void_p), ("k_out", HeadsView), ("q_norm", QkNorm),
                ("k_norm", QkNorm), ("positions", PositionsView),
                ("sequence_delta", SequenceDelta), ("table", CosSinTable),
                ("slot_mapping", ctypes.c_void_p), ("cache", PagedKvCache),
                ("error_flag", ctypes.c_void_p), ("direction", ctypes.c_int32),
                ("reserved2", ctypes.c_int32)]


def new(struct_type, **fields):
    """A zeroed versioned struct with struct_size set (the header's rule)."""
    return struct_type(struct_size=ctypes.sizeof(struct_type), **fields)


_MESSAGE_SIZE = 1024
_P = ctypes.c_void_p
_SIGNATURES = {
    "mrope_c_api_version": (ctypes.c_uint32, []),
    "mrope_library_get_info": (ctypes.c_int, [_P, _P, ctypes.c_size_t]),
    "mrope_model_load": (ctypes.c_int, [ctypes.c_char_p, _P, _P, ctypes.c_size_t]),
    "mrope_model_from_config_text": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p,
                                                    ctypes.c_size_t, _P, _P,
                                                    ctypes.c_size_t]),
    "mrope_model_with_overrides": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, _P, _P,
                                                  ctypes.c_size_t]),
    "mrope_model_free": (None, [_P]),
    "mrope_model_get_info": (ctypes.c_int, [_P, _P, _P, ctypes.c_size_t]),
    "mrope_model_for_layer_type": (ctypes.c_int, [_P, ctypes.c_char_p, _P, _P, ctypes.c_size_t]),
    "mrope_rotary_create": (ctypes.c_int, [_P, ctypes.c_int64, ctypes.c_int32, _P, _P,
                                           ctypes.c_size_t]),
    "mrope_rotary_free": (None, [_P]),
    "mrope_rotary_get_info": (ctypes.c_int, [_P, _P, _P, ctypes.c_size_t]),
    "mrope_rotary_cos_sin": (ctypes.c_int, [_P, _P, _P, _P, ctypes.c_int64, _P,
                                            ctypes.c_size_t]),
    "mrope_launch_kernel": (ctypes.c_int, [_P, _P, _P, _P, ctypes.c_size_t]),
    "mrope_launch_fused_kernel": (ctypes.c_int, [_P, _P, _P, _P, ctypes.c_size_t]),
}

_lock = threading.Lock()
_library = None


def library():
    """The loaded C ABI library (checked for API version 1)."""
    global _library
    with _lock:
        if _library is None:
            path, lib = _extension_with_abi()
            if lib is None:
                path = os.environ.get("MROPE_C_LIBRARY") or os.path.join(
                    os.path.dirname(os.path.abspath(__file__)), "libmrope_c.so")
                lib = ctypes.CDLL(path)
            for name, (restype, argtypes) in _SIGNATURES.items():
                function = getattr(lib, name)
                function.restype, function.argtypes = restype, argtypes
            if lib.mrope_c_api_version() != API_VERSION:
                raise ImportError(f"{path}: C API version {lib.mrope_c_api_version()}, "
                                  f"mrope.cuda needs {API_VERSION}")
            _library = lib
        return _library


def _extension_with_abi():
    """(path, library) of the loaded extension when it carries the C ABI, else (None, None)."""
    extension = sys.modules.get("mrope._mrope")
    if extension is None:
        return None, None
    lib = ctypes.CDLL(extension.__file__)  # already loaded: the same handle
    if not hasattr(lib, "mrope_c_api_version"):
        raise ImportError(f"{extension.__file__} was built without CUDA: mrope.cuda is not "
                          f"available in this build")
    return extension.__file__, lib


class Error(ValueError):
    """A C ABI call failed: ``code`` is its mrope_status."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def call(name, *args):
    """Calls ``name`` with ``args`` and the message buffer; raises Error unless MROPE_OK."""
    message = ctypes.create_string_buffer(_MESSAGE_SIZE)
    code = getattr(library(), name)(*args, message, _MESSAGE_SIZE)
    if code != OK:
        raise Error(code, message.value.decode("utf-8", "replace"))


_on_host = None


def kernels_on_host():
    """Whether the loaded library runs the kernels on the CPU (the host-harness test build)."""
    global _on_host
    if _on_host is None:
        info = new(LibraryInfo)
        call("mrope_library_get_info", ctypes.byref(info))
        _on_host = bool(info.kernels_on_host)
    return _on_host
