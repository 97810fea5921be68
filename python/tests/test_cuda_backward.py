"""mrope.cuda's backward on the CPU (the host-harness package, python/BUILD.bazel
:pytest_cuda_host): inverse=True rotates by -angle, bit for bit as numpy's inverse rotation by
the model's cos/sin, and undoes the forward within rounding; apply_mrope (out of place) is
differentiable with torch, checked against autograd of a plain fp64 torch rotation (skipped
without torch)."""
import numpy as np
import pytest

import mrope.cuda as mc
from mrope import _capi

from test_cuda import CudaArrayInterface, qkv_buffer, rotate
from test_cuda import model, prompt  # noqa: F401 (fixtures: qwen2_vl and test_cuda's PROMPT)

pytestmark = pytest.mark.skipif(not _capi.kernels_on_host(),
                                reason="needs the host-harness package (pytest_cuda_host)")


def test_inverse_is_the_rotation_by_minus_angle_bit_for_bit(model, prompt):
    positions, cos, sin = prompt
    gradient = qkv_buffer(seed=3)
    expected = gradient.copy()
    expected[:, :6] = rotate(gradient[:, :6], cos, -sin)
    flag = np.zeros(1, np.int32)
    mc.apply_mrope_(gradient[:, :4], gradient[:, 4:6], positions, model, inverse=True,
                    error_flag=flag)
    assert np.array_equal(gradient.view(np.uint32), expected.view(np.uint32))
    assert flag[0] == 0


def test_backward_of_forward_is_the_identity_within_rounding(model, prompt):
    positions, _, _ = prompt
    x = qkv_buffer(seed=4)
    qkv = x.copy()
    mc.apply_mrope_(qkv[:, :4], qkv[:, 4:6], positions, model)
    assert not np.array_equal(qkv, x)
    mc.apply_mrope_(qkv[:, :4], qkv[:, 4:6], positions, model, inverse=True)
    # |x| <= 1 and two fp32 rotations: a few ulps of 1.
    np.testing.assert_allclose(qkv, x, rtol=0, atol=1e-6)
    assert np.array_equal(qkv[:, 6:], x[:, 6:])  # v untouched


def test_fused_inverse_equals_apply_inverse_and_refuses_a_norm(model, prompt):
    positions, _, _ = prompt
    reference = qkv_buffer(seed=5)
    mc.apply_mrope_(reference[:, :4], reference[:, 4:6], positions, model, inverse=True)
    qkv = qkv_buffer(seed=5)
    mc.fused_mrope_(qkv[:, :4], qkv[:, 4:6], qkv[:, 6:], positions, model, k_out=qkv[:, 4:6],
                    inverse=True)
    assert np.array_equal(qkv, reference)
    weight = np.ones(128, np.float32)
    with pytest.raises(ValueError, match="direction=kInverse with a norm"):
        mc.fused_mrope_(qkv[:, :4], qkv[:, 4:6], qkv[:, 6:], positions, model,
                        k_out=qkv[:, 4:6], q_norm_weight=weight, norm="weight", inverse=True)


def test_apply_mrope_out_of_place_leaves_its_inputs(model, prompt):
    positions, _, _ = prompt
    reference = qkv_buffer(seed=6)
    mc.apply_mrope_(reference[:, :4], reference[:, 4:6], positions, model)
    qkv = qkv_buffer(seed=6)
    q, k = mc.apply_mrope(qkv[:, :4], qkv[:, 4:6], positions, model)
    assert np.array_equal(q, reference[:, :4]) and np.array_equal(k, reference[:, 4:6])
    assert np.array_equal(qkv, qkv_buffer(seed=6))
    with pytest.raises(ValueError, match="inverse: expected True or False, got 'yes'"):
        mc.apply_mrope_(qkv[:, :4], qkv[:, 4:6], positions, model, inverse="yes")
    with pytest.raises(ValueError, match="q, k: apply_mrope copies them"):
        mc.apply_mrope(CudaArrayInterface(qkv[:, :4]), CudaArrayInterface(qkv[:, 4:6]),
                       positions, model)


def test_torch_autograd_equals_a_plain_fp64_rotation(model, prompt):
    torch = pytest.importorskip("torch")
    positions, cos, sin = prompt
    x = qkv_buffer(seed=7)
    q = torch.tensor(x[:, :4], requires_grad=True)
    k = torch.tensor(x[:, 4:6], requires_grad=True)
    q_rotated, k_rotated = mc.apply_mrope(q, k, torch.from_numpy(positions), model)
    rng = np.random.default_rng(8)
    weight_q = rng.uniform(-1, 1, q.shape)  # a loss with a different gradient per element
    weight_k = rng.uniform(-1, 1, k.shape)
    loss = ((q_rotated * torch.tensor(weight_q, dtype=torch.float32)).sum() +
            (k_rotated * torch.tensor(weight_k, dtype=torch.float32)).sum())
    loss.backward()

    c = torch.tensor(cos, dtype=torch.float64)[:, None, :]
    s = torch.tensor(sin, dtype=torch.float64)[:, None, :]

    def plain_rotation(t):  # NeoX halves, fp64
        a, b = t[..., :64], t[..., 64:]
        return torch.cat([a * c - b * s, b * c + a * s], dim=-1)

    q64 = torch.tensor(x[:, :4], dtype=torch.float64, requires_grad=True)
    k64 = torch.tensor(x[:, 4:6], dtype=torch.float64, requires_grad=True)
    q64_rotated, k64_rotated = plain_rotation(q64), plain_rotation(k64)
    ((q64_rotated * torch.tensor(weight_q)).sum() +
     (k64_rotated * torch.tensor(weight_k)).sum()).backward()

    for got, want in ((q_rotated, q64_rotated), (k_rotated, k64_rotated), (q.grad, q64.grad),
                      (k.grad, k64.grad)):
        assert got.dtype == torch.float32 and got.shape == want.shape
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=0,
                                   atol=1e-6)
    assert np.array_equal(q.detach().numpy(), x[:, :4])  # inputs untouched
    if not hasattr(torch.library, "custom_op"):  # torch < 2.4: no custom ops to check
        return
    # The in-place custom op's inverse, by keyword and through torch.ops (schema default).
    qkv = torch.from_numpy(qkv_buffer(seed=7))
    mc.apply_mrope_(qkv[:, :4], qkv[:, 4:6], torch.from_numpy(positions), model)
    torch.ops.mrope.apply_mrope_(qkv[:, :4], qkv[:, 4:6], torch.from_numpy(positions),
                                 mc.model_key(model), 1, "double", None, mc.error_flag(qkv),
                                 True)
    np.testing.assert_allclose(qkv.numpy(), x, rtol=0, atol=1e-6)
