"""Torch tensors at the package boundary.

The extension reads anything numpy.asarray takes (numpy arrays, lists, objects with
``__array__``) and DLPack-only objects, reading C-contiguous int64 arrays in place. Torch
tensors are detached and brought to the CPU here (no copy for CPU tensors), and outputs become
torch tensors on the input's device when a torch tensor came in. torch is never imported here: a
torch tensor can only come from a program that imported it already, and without torch the
package pays nothing for it.
"""
import sys


def torch_loaded():
    """Whether the program imported torch (only then can a torch tensor come in)."""
    return "torch" in sys.modules


def to_host(value):
    """``value`` as the extension reads it: a torch tensor as a CPU numpy array, else as is."""
    if isinstance(value, sys.modules["torch"].Tensor):
        try:
            return value.numpy()  # a CPU tensor without grad (the usual case): shared memory
        except (RuntimeError, TypeError):  # it requires grad, or lives on a GPU
            return value.detach().cpu().numpy()
    return value


def first_tensor(*values):
    """Returns the first torch tensor among ``values``, or None."""
    tensor_type = sys.modules["torch"].Tensor
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
