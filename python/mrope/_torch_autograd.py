"""mrope.cuda's differentiable, out-of-place apply_mrope for torch tensors: a
torch.autograd.Function over the in-place op (torch.library's register_autograd takes only
functional ops, and mrope's custom ops mutate q, k and the error flag). Needs no custom-op
support (any torch with autograd); imported by mrope.cuda when torch is installed, which
hands it the in-place rotation."""
import torch


class ApplyMrope(torch.autograd.Function):
    """Forward: rotated copies of q and k. Backward: the incoming gradients rotated by the
    inverse (the rotation is orthogonal, so its transpose is its inverse); positions and the
    options get no gradient."""

    @staticmethod
    def forward(ctx, q, k, rotate_):
        ctx.rotate_ = rotate_
        q_out, k_out = q.clone(), k.clone()
        rotate_(q_out, k_out, inverse=False)
        return q_out, k_out

    @staticmethod
    def backward(ctx, grad_q, grad_k):
        # Gradients may be broadcast views (stride 0): rotate contiguous copies.
        grad_q = grad_q.clone(memory_format=torch.contiguous_format)
        grad_k = grad_k.clone(memory_format=torch.contiguous_format)
        ctx.rotate_(grad_q, grad_k, inverse=True)
        return grad_q, grad_k, None


def apply_mrope(q, k, rotate_):
    """Rotated copies of q and k, differentiable: `rotate_(q, k, inverse)` rotates in place
    (mrope.cuda.apply_mrope_ with the positions, model and options bound)."""
    return ApplyMrope.apply(q, k, rotate_)
