"""Array conversion at the package boundary.

Inputs: numpy arrays and lists pass through (the extension reads them); torch tensors become
numpy arrays (no copy for CPU tensors); other objects with ``__dlpack__`` but no ``__array__``
go through ``numpy.from_dlpack``. Outputs become torch tensors on the input's device when a
torch tensor came in. torch is never imported here: a torch tensor can only come from a
program that imported it already.
"""
import sys

import numpy as np

_PLAIN = (np.ndarray, list, tuple, int, float, bool, type(None))


def _torch_tensor_type():
    torch = sys.modules.get("torch")
    return None if torch is None else torch.Tensor


def to_host(value):
    """Returns ``value`` in a form the extension reads (anything numpy.asarray takes)."""
    if isinstance(value, _PLAIN):
        return value
    tensor_type = _torch_tensor_type()
    if tensor_type is not None and isinstance(value, tensor_type):
        return value.detach().cpu().numpy()
    if hasattr(value, "__dlpack__") and not hasattr(value, "__array__"):
        return np.from_dlpack(value)
    return value


def first_tensor(*values):
    """Returns the first torch tensor among ``values``, or None (at once without torch)."""
    if "torch" not in sys.modules:
        return None
    tensor_type = _torch_tensor_type()
    for value in values:
        if isinstance(value, tensor_type):
            return value
    return None


def like(array, tensor):
    """Returns ``array`` as a torch tensor on ``tensor``'s device, or unchanged if no tensor."""
    if tensor is None:
        return array
    out = sys.modules["torch"].from_numpy(array)
    return out if tensor.device.type == "cpu" else out.to(tensor.device)
