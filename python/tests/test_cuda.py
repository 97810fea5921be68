"""mrope.cuda on the CPU: the C ABI's kernels on the host execution harness (the host package,
python/BUILD.bazel :pytest_cuda_host), numpy arrays standing in for device memory. Results are
checked bit for bit against a numpy rotation by the model's own cos/sin (fp32 math without
FMA, rounded to nearest even, as the kernel)."""
import ctypes
import pickle

import numpy as np
import pytest

import mrope
import mrope.cuda as mc
from mrope import _capi
from mrope import _launch

pytestmark = pytest.mark.skipif(not _capi.kernels_on_host(),
                                reason="needs the host-harness package (pytest_cuda_host)")

HEAD_DIM, PAIRS = 128, 64
VISION_START, VISION_END, IMAGE = 151652, 151653, 151655
# T3 I1x4x4 T2: 11 tokens of text, an image of 4 merged tokens, text (Qwen token ids).
PROMPT = [[11, 12, 13, VISION_START] + [IMAGE] * 4 + [VISION_END, 14, 15]]
GRID = [[1, 4, 4]]
TOKENS = 11


@pytest.fixture(scope="module")
def model():
    return mrope.Model.from_config("qwen2_vl")


@pytest.fixture(scope="module")
def prompt(model):
    """(positions [3, T] int64, cos [T, 64], sin [T, 64]) of PROMPT."""
    plan = model.plan(PROMPT, GRID)
    cos, sin = plan.cos_sin()
    return np.ascontiguousarray(plan.positions()[:, 0]), cos[0], sin[0]


def qkv_buffer(tokens=TOKENS, q_heads=4, kv_heads=2, seed=1):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (tokens, q_heads + 2 * kv_heads, HEAD_DIM)).astype(np.float32)


def rotate(x, cos, sin):
    """NeoX rotation of [T, H, 128] float32 by cos/sin [T, 64], elementwise float32 math."""
    a, b = x[..., :PAIRS], x[..., PAIRS:]
    c, s = cos[:, None, :], sin[:, None, :]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)


def to_bf16_bits(x):
    bits = x.astype(np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


class FakeDLPack:
    """A DLPack producer over a numpy array with another dtype label (numpy has no bf16)."""

    _NAME = b"dltensor"

    def __init__(self, array, code, bits):
        from mrope._arrays import _DLTensor  # the consumer's own struct layout
        self.array = array
        self.shape = (ctypes.c_int64 * array.ndim)(*array.shape)
        self.strides = (ctypes.c_int64 * array.ndim)(
            *[s // array.itemsize for s in array.strides])
        self.tensor = _DLTensor(data=array.ctypes.data, ndim=array.ndim, shape=self.shape,
                                strides=self.strides)
        self.tensor.device.device_type = 1
        self.tensor.dtype.code, self.tensor.dtype.bits, self.tensor.dtype.lanes = code, bits, 1
        # DLManagedTensor: the tensor, then manager_ctx and deleter (both NULL).
        self.managed = (ctypes.c_byte * (ctypes.sizeof(_DLTensor) + 16))()
        ctypes.memmove(self.managed, ctypes.addressof(self.tensor), ctypes.sizeof(_DLTensor))

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, stream=None):
        new_capsule = ctypes.pythonapi.PyCapsule_New
        new_capsule.restype = ctypes.py_object
        new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new_capsule(ctypes.addressof(self.managed), self._NAME, None)


class CudaArrayInterface:
    """An object offering only __cuda_array_interface__ (host pointers on the host build)."""

    def __init__(self, array, readonly=False):
        self.array = array
        interface = dict(array.__array_interface__)
        interface["data"] = (interface["data"][0], readonly)
        interface["version"] = 3
        self.__cuda_array_interface__ = interface


def test_fp32_views_of_a_fused_qkv_buffer_bit_for_bit(model, prompt):
    positions, cos, sin = prompt
    qkv = qkv_buffer()
    expected = qkv.copy()
    expected[:, :6] = rotate(qkv[:, :6], cos, sin)
    flag = np.zeros(1, np.int32)
    mc.apply_mrope_(qkv[:, :4], qkv[:, 4:6], positions, model, error_flag=flag)
    assert np.array_equal(qkv.view(np.uint32), expected.view(np.uint32))
    assert flag[0] == 0


def test_flat_vllm_layout_int32_positions_and_cai_match(model, prompt):
    positions, _, _ = prompt
    reference = qkv_buffer()
    mc.apply_mrope_(reference[:, :4], reference[:, 4:6], positions, model)
    flat = qkv_buffer().reshape(TOKENS, -1)  # [T, (Hq + 2 Hk) * D], q and k column slices
    q, k = flat[:, :4 * HEAD_DIM], flat[:, 4 * HEAD_DIM:6 * HEAD_DIM]
    mc.apply_mrope_(q, k, positions.astype(np.int32), model)
    assert np.array_equal(flat.reshape(reference.shape), reference)
    through_cai = qkv_buffer()
    flag = CudaArrayInterface(np.zeros(1, np.int32))
    mc.apply_mrope_(CudaArrayInterface(through_cai[:, :4]),
                    CudaArrayInterface(through_cai[:, 4:6]), CudaArrayInterface(positions),
                    model, error_flag=flag)
    assert np.array_equal(through_cai, reference)


def test_fp16_and_bf16_round_once_to_nearest_even(model, prompt):
    positions, cos, sin = prompt
    source = qkv_buffer()
    half = source.astype(np.float16)
    expected = rotate(half[:, :6].astype(np.float32), cos, sin).astype(np.float16)
    mc.apply_mrope_(half[:, :4], half[:, 4:6], positions, model)
    assert np.array_equal(half[:, :6].view(np.uint16), expected.view(np.uint16))

    bits = to_bf16_bits(source)
    expected = to_bf16_bits(rotate(from_bf16_bits(bits[:, :6]), cos, sin))
    mc.apply_mrope_(FakeDLPack(bits[:, :4], 4, 16), FakeDLPack(bits[:, 4:6], 4, 16), positions,
                    model, error_flag=np.zeros(1, np.int32))
    assert np.array_equal(bits[:, :6], expected)


def test_cos_sin_is_the_models_own(model, prompt):
    positions, cos, sin = prompt
    got_cos, got_sin = mc.cos_sin(positions, model, seq_len=TOKENS)
    assert np.array_equal(got_cos, cos) and np.array_equal(got_sin, sin)
    with pytest.raises(ValueError, match="positions: expected"):
        mc.cos_sin(positions.astype(np.float32), model)


def test_text_only_positions_as_one_row(model):
    positions = np.arange(TOKENS, dtype=np.int64)
    one_row, three_rows = qkv_buffer(), qkv_buffer()
    mc.apply_mrope_(one_row[:, :4], one_row[:, 4:6], positions, model)
    mc.apply_mrope_(three_rows[:, :4], three_rows[:, 4:6], np.stack([positions] * 3), model)
    assert np.array_equal(one_row, three_rows)


def test_text_row_first_is_dropped_as_transformers_5_does(model, prompt):
    """transformers 5.x's text models take [4, B, L] position ids [text; t; h; w] and rotate
    with rows 1..3 (the text row feeds the attention mask only)."""
    positions, cos, sin = prompt
    four = np.concatenate([np.arange(TOKENS, dtype=np.int64)[None] + 1000, positions])
    got_cos, got_sin = mc.cos_sin(four, model, seq_len=TOKENS)
    assert np.array_equal(got_cos, cos) and np.array_equal(got_sin, sin)
    three_rows, four_rows = qkv_buffer(), qkv_buffer()
    mc.apply_mrope_(three_rows[:, :4], three_rows[:, 4:6], positions, model)
    mc.apply_mrope_(four_rows[:, :4], four_rows[:, 4:6], four, model)
    assert np.array_equal(three_rows, four_rows)
    with pytest.raises(ValueError, match=r"positions: expected \[3, tokens\] or \[4, tokens\]"):
        mc.apply_mrope_(four_rows[:, :4], four_rows[:, 4:6], np.stack([positions[0]] * 2), model)


def test_cos_sin_cache_gives_the_same_bits(model, prompt):
    positions, _, _ = prompt
    text = model.plan([list(range(100, 100 + 16))])  # positions 0..15 on every axis
    cos, sin = text.cos_sin()
    cache = np.ascontiguousarray(np.concatenate([cos[0], sin[0]], axis=1))  # vLLM [P, 128]
    computed, from_cache = qkv_buffer(), qkv_buffer()
    mc.apply_mrope_(computed[:, :4], computed[:, 4:6], positions, model)
    mc.apply_mrope_(from_cache[:, :4], from_cache[:, 4:6], positions, model, cos_sin_cache=cache)
    assert np.array_equal(computed, from_cache)


def test_bad_positions_set_the_error_flag_and_skip_the_token(model, prompt):
    positions, _, _ = prompt
    positions = positions.copy()
    positions[2, 5] = 1 << 24
    qkv, before = qkv_buffer(), qkv_buffer()
    flag = mc.error_flag(qkv)
    flag[0] = 0
    mc.apply_mrope_(qkv[:, :4], qkv[:, 4:6], positions, model)
    assert flag[0] == mc.ERROR_POSITION_OUT_OF_RANGE
    assert np.array_equal(qkv[5], before[5]) and not np.array_equal(qkv[4], before[4])
    flag[0] = 0


@pytest.mark.parametrize("change, message", [
    (lambda a: dict(a, q=a["q"].astype(np.float64)), "q: DLPack dtype .code 2, bits 64"),
    (lambda a: dict(a, k=a["k"].astype(np.float16)), "dtype"),
    (lambda a: dict(a, q=a["q"][:, :, :64]), r"q: expected \[tokens, heads, 128\]"),
    (lambda a: dict(a, positions=a["positions"].astype(np.float32)), "positions: dtype"),
    (lambda a: dict(a, positions=a["positions"][:2]), r"positions: expected \[3, tokens\]"),
    (lambda a: dict(a, positions=a["positions"][:, :5]), "num_tokens"),
    (lambda a: dict(a, q=None), "q: expected a tensor"),
    (lambda a: dict(a, k=np.array(None)), "k: "),
    (lambda a: dict(a, q=CudaArrayInterface(a["q"], readonly=True),
                    error_flag=np.zeros(1, np.int32)), "q: is read-only"),
    (lambda a: dict(a, error_flag=np.zeros(2, np.int32)), "error_flag: expected"),
    (lambda a: dict(a, model=3), "model: expected an mrope.Model"),
    (lambda a: dict(a, model="no_such_model"), "neither a config file nor a preset"),
    (lambda a: dict(a, sincos_math="half"), "sincos_math"),
    (lambda a: dict(a, cos_sin_cache=np.zeros((4, 64), np.float32)), "cos_sin_cache"),
])
def test_bad_arguments_raise_value_error_before_launching(model, prompt, change, message):
    positions, _, _ = prompt
    qkv = qkv_buffer()
    before = qkv.copy()
    args = dict(q=qkv[:, :4], k=qkv[:, 4:6], positions=positions, model=model, error_flag=None)
    args = change(args)
    with pytest.raises(ValueError, match=message):
        mc.apply_mrope_(args.pop("q"), args.pop("k"), args.pop("positions"), args.pop("model"),
                        **args)
    assert np.array_equal(qkv, before)


def test_models_by_name_overrides_and_pickle_give_the_same_rotation(prompt):
    positions, _, _ = prompt
    results = []
    for model in ("qwen2_vl", mrope.Model.from_config("qwen2_vl"),
                  pickle.loads(pickle.dumps(mrope.Model.from_config("qwen2_vl"))),
                  mrope.Model.from_config("qwen2_vl", {"spatial_merge_size": 2})):
        qkv = qkv_buffer()
        mc.apply_mrope_(qkv[:, :4], qkv[:, 4:6], positions, model)
        results.append(qkv)
    assert all(np.array_equal(results[0], r) for r in results[1:])


def test_fused_without_norm_or_cache_equals_apply(model, prompt):
    positions, _, _ = prompt
    reference, fused = qkv_buffer(), qkv_buffer()
    mc.apply_mrope_(reference[:, :4], reference[:, 4:6], positions, model)
    k = fused[:, 4:6]
    mc.fused_mrope_(fused[:, :4], k, fused[:, 6:8], positions, model, k_out=k)
    assert np.array_equal(fused, reference)


def test_fused_writes_q_out_and_a_paged_cache(model, prompt):
    positions, cos, sin = prompt
    qkv = qkv_buffer()
    before = qkv.copy()
    q_out = np.zeros((TOKENS, 4, HEAD_DIM), np.float32)
    blocks, block_size = 4, 4
    k_cache = np.zeros((blocks, block_size, 2, HEAD_DIM), np.float32)  # NHD
    v_cache = np.zeros_like(k_cache)
    slots = np.arange(TOKENS, dtype=np.int64)[::-1].copy()
    slots[3] = -1  # no cache write for token 3
    mc.fused_mrope_(qkv[:, :4], qkv[:, 4:6], qkv[:, 6:8], positions, model, q_out=q_out,
                    slot_mapping=slots, k_cache=k_cache, v_cache=v_cache)
    assert np.array_equal(qkv, before)  # q read only, k not written back
    assert np.array_equal(q_out, rotate(before[:, :4], cos, sin))
    k_rotated = rotate(before[:, 4:6], cos, sin)
    for t, slot in enumerate(slots):
        if slot < 0:
            continue
        assert np.array_equal(k_cache[slot // block_size, slot % block_size], k_rotated[t])
        assert np.array_equal(v_cache[slot // block_size, slot % block_size], before[t, 6:8])
    token_3_slot = TOKENS - 1 - 3  # what slot_mapping would have given it
    assert not k_cache.reshape(-1, 2, HEAD_DIM)[token_3_slot].any()


def test_fused_rms_norm_and_hnd_cache(model, prompt):
    positions, cos, sin = prompt
    qkv = qkv_buffer()
    before = qkv.copy()
    weight = np.linspace(0.5, 1.5, HEAD_DIM).astype(np.float32)
    k_cache = np.zeros((3, 2, 4, HEAD_DIM), np.float32)  # HND [blocks, H, block_size, D]
    v_cache = np.zeros_like(k_cache)
    slots = np.arange(TOKENS, dtype=np.int64)
    mc.fused_mrope_(qkv[:, :4], qkv[:, 4:6], qkv[:, 6:8], positions, model,
                    q_norm_weight=weight, k_norm_weight=weight, norm="weight", eps=1e-6,
                    slot_mapping=slots,
                    k_cache=k_cache, v_cache=v_cache, cache_layout="HND")

    def norm(x):
        x64 = x.astype(np.float64)
        return x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-6) * weight

    expected_q = rotate(norm(before[:, :4]).astype(np.float32), cos, sin)
    np.testing.assert_allclose(qkv[:, :4], expected_q, rtol=0, atol=1e-5)
    expected_k = rotate(norm(before[:, 4:6]).astype(np.float32), cos, sin)
    for t in range(TOKENS):
        np.testing.assert_allclose(k_cache[t // 4, :, t % 4], expected_k[t], rtol=0, atol=1e-5)
        assert np.array_equal(v_cache[t // 4, :, t % 4], before[t, 6:8])


def fused_qkv_with_norm_weight(qkv, head_dim, positions, model, weight, **norm):
    """A copy of qkv [T, 4 D] (q: 2 heads, k, v) through fused_mrope_ with `weight` on q and k
    (k written back in place)."""
    x = qkv.copy()
    mc.fused_mrope_(x[:, :2 * head_dim], x[:, 2 * head_dim:3 * head_dim], x[:, 3 * head_dim:],
                    positions, model, k_out=x[:, 2 * head_dim:3 * head_dim],
                    q_norm_weight=weight, k_norm_weight=weight, **norm)
    return x


@pytest.mark.parametrize("preset,form", [("qwen3_5", "one_plus_weight"),
                                         ("qwen4_exp", "one_plus_weight"),
                                         ("qwen3_vl", "weight")])
def test_fused_norm_defaults_to_the_family_form(preset, form):
    """Without norm=, fused_mrope_ normalises q and k as the family's attention does (its row's
    q/k norm): Qwen3.5's and Qwen4-Exp's (1 + w), Qwen3-VL's w."""
    model = mrope.Model.from_config(preset)
    head_dim = _launch.rotary_of(_launch.model_source(model), 1, "double")[1].head_dim
    rng = np.random.default_rng(36)
    qkv = rng.standard_normal((TOKENS, 4 * head_dim)).astype(np.float32)
    weight = rng.uniform(-0.5, 0.5, head_dim).astype(np.float32)
    positions = np.stack([np.arange(TOKENS)] * 3).astype(np.int64)

    def fused(**norm):
        return fused_qkv_with_norm_weight(qkv, head_dim, positions, model, weight, **norm)

    other = {"weight": "one_plus_weight", "one_plus_weight": "weight"}[form]
    assert np.array_equal(fused(), fused(norm=form))
    assert not np.array_equal(fused(), fused(norm=other))


def test_fused_norm_weights_need_a_form_where_the_family_has_none(model, prompt):
    positions, _, _ = prompt
    qkv = qkv_buffer()
    with pytest.raises(ValueError, match="qwen2_vl's attention has no q/k norm"):
        mc.fused_mrope_(qkv[:, :4], qkv[:, 4:6], qkv[:, 6:8], positions, model,
                        k_out=qkv[:, 4:6], q_norm_weight=np.ones(HEAD_DIM, np.float32))


def test_fused_norm_of_hunyuan_vl_is_the_norm_of_the_rotated_head():
    """HunYuan-VL normalises q and k after the rotary: without norm=, its weights take that
    form (weight_after_rotary), not the norm before the rotary."""
    model = mrope.Model.from_config("hunyuan_vl")
    info = _launch.rotary_of(_launch.model_source(model), 1, "double")[1]
    head_dim = info.head_dim
    assert (info.num_axes, info.split_halves) == (4, 1)
    rng = np.random.default_rng(38)
    qkv = rng.standard_normal((TOKENS, 4 * head_dim)).astype(np.float32)
    weight = rng.uniform(0.5, 1.5, head_dim).astype(np.float32)
    positions = np.stack([np.arange(TOKENS)] * 4).astype(np.int64)
    positions[1:, 2:] += 7  # the four rows differ

    def fused(**norm):
        return fused_qkv_with_norm_weight(qkv, head_dim, positions, model, weight, **norm)

    assert np.array_equal(fused(), fused(norm="weight_after_rotary"))
    assert not np.array_equal(fused(), fused(norm="weight"))
    with pytest.raises(ValueError, match=r"\[4, tokens\] or \[tokens\]"):
        mc.apply_mrope_(qkv[:, :2 * head_dim], qkv[:, 2 * head_dim:3 * head_dim],
                        positions[:3], model)
    with pytest.raises(ValueError, match="XD-RoPE gives a pair's two elements"):
        mc.cos_sin(positions, model)  # [T, rotary_dim / 2] cannot hold them


def test_fused_bad_arguments(model, prompt):
    positions, _, _ = prompt
    qkv = qkv_buffer()
    with pytest.raises(ValueError, match="k_out"):  # neither a cache nor k_out
        mc.fused_mrope_(qkv[:, :4], qkv[:, 4:6], qkv[:, 6:8], positions, model)
    with pytest.raises(ValueError, match="k_cache, v_cache"):
        mc.fused_mrope_(qkv[:, :4], qkv[:, 4:6], qkv[:, 6:8], positions, model,
                        slot_mapping=np.arange(TOKENS, dtype=np.int64))
    with pytest.raises(ValueError, match="norm"):
        mc.fused_mrope_(qkv[:, :4], qkv[:, 4:6], qkv[:, 6:8], positions, model,
                        k_out=qkv[:, 4:6], q_norm_weight=np.ones(128, np.float32), norm="l2")
    with pytest.raises(ValueError, match="slot_mapping"):
        cache = np.zeros((2, 4, 2, HEAD_DIM), np.float32)
        mc.fused_mrope_(qkv[:, :4], qkv[:, 4:6], qkv[:, 6:8], positions, model,
                        slot_mapping=np.arange(5, dtype=np.int64), k_cache=cache,
                        v_cache=cache.copy())


def test_cpu_torch_tensors_through_the_custom_ops(model, prompt):
    torch = pytest.importorskip("torch")
    positions, _, _ = prompt
    reference = qkv_buffer()
    mc.apply_mrope_(reference[:, :4], reference[:, 4:6], positions, model)
    qkv = torch.from_numpy(qkv_buffer())
    flag = torch.zeros(1, dtype=torch.int32)
    mc.apply_mrope_(qkv[:, :4], qkv[:, 4:6], torch.from_numpy(positions), model,
                    error_flag=flag)
    assert np.array_equal(qkv.numpy(), reference) and flag.item() == 0
    if not hasattr(torch.library, "custom_op"):  # torch < 2.4: DLPack path only
        assert mc._torch_ops is None
        return
    assert hasattr(torch.ops.mrope, "apply_mrope_") and hasattr(torch.ops.mrope, "fused_mrope_")


def test_torch_compile_traces_the_op(model, prompt):
    torch = pytest.importorskip("torch")
    if not hasattr(torch.library, "custom_op"):
        pytest.skip(f"custom ops and torch.compile need torch >= 2.4, this is {torch.__version__}")
    positions, _, _ = prompt
    reference = qkv_buffer()
    mc.apply_mrope_(reference[:, :4], reference[:, 4:6], positions, model)
    flag = torch.zeros(1, dtype=torch.int32)
    key = mc.model_key(model)

    def step(qkv, positions):
        torch.ops.mrope.apply_mrope_(qkv[:, :4], qkv[:, 4:6], positions, key, 1, "double", None,
                                     flag)
        return qkv * 1

    compiled = torch.compile(step, fullgraph=True, backend="eager")
    out = compiled(torch.from_numpy(qkv_buffer()), torch.from_numpy(positions))
    assert np.array_equal(out.numpy(), reference) and flag.item() == 0


def test_decode_positions_from_token_index_and_delta(model):
    token_index = np.array([11, 12, 11, 5], np.int64)
    seq_id = np.array([0, 0, 1, 1], np.int32)
    delta = np.array([-2, 3], np.int64)
    planar = np.stack([token_index + delta[seq_id]] * 3)  # [9, 10, 14, 8] on every axis
    expected, decoded = qkv_buffer(tokens=4), qkv_buffer(tokens=4)
    mc.apply_mrope_(expected[:, :4], expected[:, 4:6], planar, model)
    mc.apply_mrope_(decoded[:, :4], decoded[:, 4:6], mc.Decode(token_index, delta, seq_id),
                    model)
    assert np.array_equal(decoded, expected)
    one_per_sequence = qkv_buffer(tokens=2)
    reference = qkv_buffer(tokens=2)
    mc.apply_mrope_(one_per_sequence[:, :4], one_per_sequence[:, 4:6],
                    mc.Decode(token_index[:2], delta), model)
    mc.apply_mrope_(reference[:, :4], reference[:, 4:6], np.array([9, 15]), model)
    assert np.array_equal(one_per_sequence, reference)

    bad = qkv_buffer(tokens=4)
    flag = np.zeros(1, np.int32)
    mc.apply_mrope_(bad[:, :4], bad[:, 4:6],
                    mc.Decode(token_index, delta, np.array([0, 0, 1, 2], np.int32)), model,
                    error_flag=flag)
    assert flag[0] == mc.ERROR_SEQUENCE_OUT_OF_RANGE
    assert np.array_equal(bad[3], qkv_buffer(tokens=4)[3])
    with pytest.raises(ValueError, match="positions.seq_id"):
        mc.apply_mrope_(bad[:, :4], bad[:, 4:6], mc.Decode(token_index, delta, seq_id[:3]),
                        model)


def e4m3_to_float(bits):
    """OCP fp8 e4m3 bytes as float64 (no NaN among the test's values)."""
    bits = bits.astype(np.int64)
    sign = np.where(bits & 0x80, -1.0, 1.0)
    exponent, mantissa = (bits >> 3) & 0xF, bits & 7
    normal = (1 + mantissa / 8) * np.exp2(exponent - 7.0)
    subnormal = mantissa / 8 * 2.0 ** -6
    return sign * np.where(exponent == 0, subnormal, normal)


def test_fused_fp8_q_out_and_cache_with_scales(model, prompt):
    positions, cos, sin = prompt
    qkv = qkv_buffer()
    before = qkv.copy()
    q_out = np.zeros((TOKENS, 4, HEAD_DIM), np.uint8)  # fp8 e4m3 bytes, as vLLM stores them
    k_cache = np.zeros((3, 4, 2, HEAD_DIM), np.uint8)
    v_cache = np.zeros_like(k_cache)
    scales = {name: np.array([value], np.float32)
              for name, value in (("q", 0.25), ("k", 0.5), ("v", 2.0))}
    mc.fused_mrope_(qkv[:, :4], qkv[:, 4:6], qkv[:, 6:8], positions, model, q_out=q_out,
                    q_scale=scales["q"], slot_mapping=np.arange(TOKENS, dtype=np.int64),
                    k_cache=k_cache, v_cache=v_cache, k_scale=scales["k"],
                    v_scale=scales["v"])

    def close(stored, expected, scale):  # e4m3 keeps 3 mantissa bits: half an ulp is 1/16
        np.testing.assert_allclose(e4m3_to_float(stored) * scale, expected, rtol=1 / 16,
                                   atol=2.0 ** -10 * scale)

    close(q_out, rotate(before[:, :4], cos, sin), 0.25)
    k_rotated = rotate(before[:, 4:6], cos, sin)
    for t in range(TOKENS):
        close(k_cache[t // 4, t % 4], k_rotated[t], 0.5)
        close(v_cache[t // 4, t % 4], before[t, 6:8], 2.0)
    with pytest.raises(ValueError, match="k_scale, v_scale"):
        mc.fused_mrope_(qkv[:, :4], qkv[:, 4:6], qkv[:, 6:8], positions, model,
                        slot_mapping=np.arange(TOKENS, dtype=np.int64), k_cache=k_cache,
                        v_cache=v_cache, k_scale=scales["k"], v_scale=np.ones(2, np.float32))


def test_available_names_the_host_harness_build():
    ok, message = mc.available()
    assert ok and "host execution harness" in message, message
