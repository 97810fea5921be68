"""mrope.cuda's differentiable, out-of-place apply_mrope for torch tensors: a
torch.autograd.Function over the in-place op (torch.library's register_autograd takes only
functional ops, and mrope's custom ops mutate q, k and the error flag). Needs no custom-op
support (any torch with autograd); imported by mrope.cuda when torch is installed."""
import torch

from mrope import cuda as _cuda


class ApplyMrope(torch.autograd.Function):
    """Forward: rotated copies of q and k. Backward: the incoming gradients rotated by the
    inverse (the rotation is orthogonal, so its transpose is its inverse); positions and the
    options get no gradient."""

    @staticmethod
    def forward(ctx, q, k, positions, model, options):
        ctx.rotation = (positions, model, options)
        q_out, k_out = q.clone(), k.clone()
        _cuda.apply_mrope_(q_out, k_out, positions, model, **options)
        return q_out, k_out

    @staticmethod
    def backward(ctx, grad_q, grad_k):
        positions, model, options = ctx.rotation
        # Gradients may be broadcast views (stride 0): rotate contiguous copies.
        grad_q = grad_q.clone(memory_format=torch.contiguous_format)
        grad_k = grad_k.clone(memory_format=torch.contiguous_format)
        _cuda.apply_mrope_(grad_q, grad_k, positions, model, inverse=True, **options)
        return grad_q, grad_k, None, None, None


def apply_mrope(q, k, positions, model, options):
    return ApplyMrope.apply(q, k, positions, model, options)

