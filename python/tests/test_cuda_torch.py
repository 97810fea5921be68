"""mrope.cuda under torch's own checkers, on the CPU through the host-harness package
(python/BUILD.bazel :pytest_cuda_torch_host; CPU torch tensors stand in for device memory):
torch.library.opcheck of both custom ops (schema and declared mutations, fake implementations,
autograd registration, AOT dispatch with dynamic shapes), torch.compile(fullgraph=True) of a
function calling them against eager, and gradcheck of the differentiable apply_mrope.

The kernels store fp32, bf16 and fp16 only, so gradcheck's float64 inputs are rotated in fp32
(``_fp32_rotation``). The rotation is linear in q and k, so a central difference has no
truncation error at any step: with a step of 2^-4 and inputs on a 2^-10 grid (x +- step is
exact in fp32), the numerical Jacobian is the fp32 cos/sin within ~1e-6, and gradcheck's
tolerance 1e-5 is far below the 2 |sin| a wrong backward (the forward rotation, or none)
differs by: ``test_gradcheck_catches_a_wrong_backward`` shows it.
"""
import numpy as np
import pytest

import mrope.cuda as mc
from mrope import _capi

from test_cuda import HEAD_DIM, TOKENS, qkv_buffer
from test_cuda import model, prompt  # noqa: F401 (fixtures: qwen2_vl and test_cuda's PROMPT)

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.skipif(not _capi.kernels_on_host(),
                       reason="needs the host-harness package (pytest_cuda_torch_host)"),
    pytest.mark.skipif(not hasattr(torch.library, "custom_op"),
                       reason="custom ops need torch >= 2.4"),
]

GRAD_STEP = 2.0 ** -4


def tensors(seed, q_heads=4, kv_heads=2):
    """Separate q, k, v [T, H, D] fp32 tensors (opcheck wants inputs that do not alias)."""
    qkv = torch.from_numpy(qkv_buffer(q_heads=q_heads, kv_heads=kv_heads, seed=seed))
    return (qkv[:, :q_heads].clone(), qkv[:, q_heads:q_heads + kv_heads].clone(),
            qkv[:, q_heads + kv_heads:].clone())


def fused_arguments(model, positions, seed):
    """fused_mrope_'s schema arguments with every optional tensor given: q out, k out, both
    norms and an NHD paged cache (11 tokens in 3 blocks of 4 slots, token t in slot t)."""
    q, k, v = tensors(seed)
    rng = np.random.default_rng(seed)
    weight = torch.from_numpy(rng.uniform(0.5, 1.5, HEAD_DIM).astype(np.float32))
    cache = torch.zeros(3, 4, 2, HEAD_DIM)
    return (q, k, v, positions, mc.model_key(model), 1, "double", None,
            torch.zeros(1, dtype=torch.int32), torch.zeros_like(q), None, torch.zeros_like(k),
            weight, weight.clone(), torch.arange(TOKENS), cache, cache.clone(), None, None,
            "weight", 1e-6, "NHD", False)


def test_opcheck_apply_mrope(model, prompt):
    positions = torch.from_numpy(prompt[0])
    for inverse in (False, True):
        q, k, _ = tensors(seed=1)
        torch.library.opcheck(
            torch.ops.mrope.apply_mrope_.default,
            (q, k, positions, mc.model_key(model), 1, "double", None,
             torch.zeros(1, dtype=torch.int32), inverse))


def test_opcheck_apply_mrope_with_a_cos_sin_cache_and_int32_positions(model, prompt):
    positions = torch.from_numpy(prompt[0]).to(torch.int32)
    cos, sin = mc.cos_sin(np.arange(64), model)  # vLLM's table: cos halves, then sin
    table = torch.from_numpy(np.concatenate([cos, sin], axis=1))
    q, k, _ = tensors(seed=2)
    torch.library.opcheck(torch.ops.mrope.apply_mrope_.default,
                          (q, k, positions, mc.model_key(model), 1, "double", table,
                           torch.zeros(1, dtype=torch.int32)))


def test_opcheck_fused_mrope(model, prompt):
    torch.library.opcheck(torch.ops.mrope.fused_mrope_.default,
                          fused_arguments(model, torch.from_numpy(prompt[0]), seed=3))


def compile_and_compare(function, make_inputs, backend):
    """Runs `function` eagerly and compiled (fullgraph) on fresh inputs; the outputs must be
    equal bit for bit, and the compiled graph must hold the op (no graph break)."""
    expected = function(*make_inputs())
    torch._dynamo.reset()
    compiled = torch.compile(function, fullgraph=True, backend=backend)
    got = compiled(*make_inputs())
    for want, have in zip(expected, got):
        assert have.dtype == want.dtype and have.shape == want.shape
        assert torch.equal(have, want)
    return expected


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compiled_apply_equals_eager(model, prompt, backend):
    key = mc.model_key(model)

    def step(qkv, positions, flag):
        # In place on views of one fused buffer, as vLLM calls it, then more work on it.
        torch.ops.mrope.apply_mrope_(qkv[:, :4], qkv[:, 4:6], positions, key, 1, "double",
                                     None, flag)
        return qkv * 2, flag.clone()

    def inputs():
        return (torch.from_numpy(qkv_buffer(seed=4)), torch.from_numpy(prompt[0]),
                torch.zeros(1, dtype=torch.int32))

    qkv, flag = compile_and_compare(step, inputs, backend)
    assert flag.item() == 0
    assert not torch.equal(qkv[:, :6], 2 * torch.from_numpy(qkv_buffer(seed=4))[:, :6])


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compiled_fused_equals_eager(model, prompt, backend):
    def step(*arguments):
        torch.ops.mrope.fused_mrope_(*arguments)
        q_out, k_out, k_cache, v_cache = (arguments[i] for i in (9, 11, 15, 16))
        return q_out + 0, k_out + 0, k_cache + 0, v_cache + 0, arguments[8] + 0

    positions = torch.from_numpy(prompt[0])
    outputs = compile_and_compare(step, lambda: fused_arguments(model, positions, seed=5),
                                  backend)
    assert outputs[-1].item() == 0 and outputs[2].abs().sum() > 0


def test_compiled_apply_mrope_trains_like_eager(model, prompt):
    """apply_mrope's autograd.Function inside a compiled training step (the backward is the
    inverse op): loss and gradients as in eager."""
    positions = torch.from_numpy(prompt[0])
    weight = torch.from_numpy(np.random.default_rng(6).uniform(-1, 1, (TOKENS, 4, HEAD_DIM))
                              .astype(np.float32))

    def loss_and_gradient(q, k):
        q = q.requires_grad_()
        q_rotated, k_rotated = mc.apply_mrope(q, k, positions, model)
        loss = (q_rotated * weight).sum() + k_rotated.sum()
        loss.backward()
        return loss.detach(), q.grad

    def inputs():
        q, k, _ = tensors(seed=6)
        return q, k

    expected = loss_and_gradient(*inputs())
    torch._dynamo.reset()
    got = torch.compile(loss_and_gradient, backend="aot_eager")(*inputs())
    assert torch.equal(got[0], expected[0]) and torch.equal(got[1], expected[1])


def grid_inputs(prompt, seed):
    """(positions, q, k) for gradcheck: PROMPT's image tokens 1 and 2 (w, then h differs from
    the other axes), q and k float64 [2, 1, D] on a 2^-10 grid in [-1, 1] requiring grad (the
    host harness takes ~4 ms a launch, and gradcheck launches three times per input)."""
    positions = torch.from_numpy(np.ascontiguousarray(prompt[0][:, 5:7]))
    assert positions.T.tolist() == [[4, 4, 5], [4, 5, 4]]
    rng = np.random.default_rng(seed)
    values = rng.integers(-1024, 1025, (2, positions.shape[1], 1, HEAD_DIM)) / 1024.0
    return positions, tuple(torch.tensor(v, requires_grad=True) for v in values)


def _fp32_rotation(apply, positions, model):
    """float64 q, k -> apply(q, k) rotated in fp32 (exact casts: inputs on a 2^-10 grid), back
    as float64."""
    def rotate(q, k):
        q_rotated, k_rotated = apply(q.float(), k.float(), positions, model)
        return q_rotated.double(), k_rotated.double()
    return rotate


def test_gradcheck_apply_mrope(model, prompt):
    positions, inputs = grid_inputs(prompt, seed=7)
    assert inputs[0].dtype == torch.float64
    assert torch.autograd.gradcheck(_fp32_rotation(mc.apply_mrope, positions, model), inputs,
                                    eps=GRAD_STEP, atol=1e-5, rtol=1e-4)


class _ForwardAsBackward(torch.autograd.Function):
    """apply_mrope with a wrong backward: the forward rotation instead of its inverse."""

    @staticmethod
    def forward(ctx, q, k, positions, model):
        ctx.rotation = (positions, model)
        return mc.apply_mrope(q.detach(), k.detach(), positions, model)

    @staticmethod
    def backward(ctx, grad_q, grad_k):
        positions, model = ctx.rotation
        grad_q, grad_k = mc.apply_mrope(grad_q.contiguous(), grad_k.contiguous(), positions,
                                        model)
        return grad_q, grad_k, None, None


def test_gradcheck_catches_a_wrong_backward(model, prompt):
    positions, inputs = grid_inputs(prompt, seed=8)
    assert not torch.autograd.gradcheck(
        _fp32_rotation(_ForwardAsBackward.apply, positions, model), inputs, eps=GRAD_STEP,
        atol=1e-5, rtol=1e-4, raise_exception=False)
