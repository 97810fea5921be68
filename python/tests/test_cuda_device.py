"""mrope.cuda on a GPU, with torch or CuPy (the GPU bundle's run.sh runs this file on the
device machine; without a CUDA framework and device every case skips). Needs no compiled
position extension: models are preset names, references come from mrope.cuda.cos_sin and
numpy. Runs under pytest or as a script (python3 test_cuda_device.py), which prints one line
per case and exits non-zero on a failure."""
import sys

import numpy as np

import mrope.cuda as mc

HEAD_DIM, PAIRS, TOKENS = 128, 64, 37
MODEL = "qwen2_vl"


def framework():
    """('torch', torch) or ('cupy', cupy) with a CUDA device, else (None, None)."""
    try:
        import torch
        if torch.cuda.is_available():
            return "torch", torch
    except ImportError:
        pass
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return "cupy", cupy
    except Exception:  # ImportError, or a CuPy without a usable driver
        pass
    return None, None


NAME, LIB = framework()


def skip_without_device():
    if NAME is None:
        import pytest
        pytest.skip("no torch or CuPy with a CUDA device")


def positions_host():
    """An image-like [3, T]: t constant over a block, h and w varying, then text."""
    t = np.arange(TOKENS)
    p = np.stack([t, t, t]).astype(np.int64)
    p[0, 4:20] = 4
    p[1, 4:20] = 4 + (np.arange(16) // 4)
    p[2, 4:20] = 4 + (np.arange(16) % 4)
    return p


def rotate(x, cos, sin):
    a, b = x[..., :PAIRS], x[..., PAIRS:]
    c, s = cos[:, None, :], sin[:, None, :]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)


def to_device(array):
    return LIB.from_numpy(array).cuda() if NAME == "torch" else LIB.asarray(array)


def to_host(array):
    return array.cpu().numpy() if NAME == "torch" else LIB.asnumpy(array)


def qkv_host(dtype=np.float32):
    rng = np.random.default_rng(3)
    return rng.uniform(-1, 1, (TOKENS, 8, HEAD_DIM)).astype(dtype)


def test_fp32_and_fp16_bit_for_bit_on_the_device():
    skip_without_device()
    positions = positions_host()
    cos, sin = mc.cos_sin(positions, MODEL)
    for dtype in (np.float32, np.float16):
        host = qkv_host(dtype)
        qkv = to_device(host)
        flag = to_device(np.zeros(1, np.int32))
        mc.apply_mrope_(qkv[:, :4], qkv[:, 4:6], to_device(positions), MODEL, error_flag=flag)
        expected = host.copy()
        expected[:, :6] = rotate(host[:, :6].astype(np.float32), cos, sin).astype(dtype)
        got = to_host(qkv)
        assert np.array_equal(got.view(np.uint8), expected.view(np.uint8)), dtype
        assert int(to_host(flag)[0]) == 0


def test_bf16_torch_flat_layout_on_a_side_stream():
    skip_without_device()
    if NAME != "torch":
        return
    torch = LIB
    positions = positions_host()
    cos, sin = mc.cos_sin(positions, MODEL)
    host = torch.from_numpy(qkv_host()).to(torch.bfloat16)
    expected = host.clone()
    expected[:, :6] = torch.from_numpy(rotate(host[:, :6].float().numpy(), cos, sin)).to(
        torch.bfloat16)
    flat = host.reshape(TOKENS, -1).cuda()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        mc.apply_mrope_(flat[:, :4 * HEAD_DIM], flat[:, 4 * HEAD_DIM:6 * HEAD_DIM],
                        torch.from_numpy(positions).cuda(), MODEL)
    stream.synchronize()
    assert torch.equal(flat.cpu().reshape(host.shape).view(torch.int16),
                       expected.view(torch.int16))


def test_error_flag_on_the_device():
    skip_without_device()
    positions = positions_host()
    positions[1, 7] = 1 << 24
    host = qkv_host()
    qkv = to_device(host)
    flag = to_device(np.zeros(1, np.int32))
    mc.apply_mrope_(qkv[:, :4], qkv[:, 4:6], to_device(positions), MODEL, error_flag=flag)
    assert int(to_host(flag)[0]) == mc.ERROR_POSITION_OUT_OF_RANGE
    assert np.array_equal(to_host(qkv)[7], host[7])


def test_cuda_graph_capture_and_compile_with_torch():
    skip_without_device()
    if NAME != "torch":
        return
    torch = LIB
    positions = torch.from_numpy(positions_host()).cuda()
    cos, sin = mc.cos_sin(positions_host(), MODEL)
    host = qkv_host()
    expected = host.copy()
    expected[:, :6] = rotate(host[:, :6], cos, sin)
    qkv = torch.from_numpy(host).cuda()
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    key = mc.model_key(MODEL)
    mc.apply_mrope_(qkv[:1, :4].clone(), qkv[:1, 4:6].clone(), positions[:, :1].contiguous(),
                    MODEL, error_flag=flag)  # warm up outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        mc.apply_mrope_(qkv[:, :4], qkv[:, 4:6], positions, MODEL, error_flag=flag)
    qkv.copy_(torch.from_numpy(host))
    graph.replay()
    torch.cuda.synchronize()
    assert np.array_equal(qkv.cpu().numpy(), expected)

    def step(x, p):
        torch.ops.mrope.apply_mrope_(x[:, :4], x[:, 4:6], p, key, 1, "double", None, flag)
        return x * 1

    compiled = torch.compile(step, fullgraph=True)
    out = compiled(torch.from_numpy(host).cuda(), positions)
    assert np.array_equal(out.cpu().numpy(), expected)


def test_bad_input_raises_value_error():
    skip_without_device()
    qkv = to_device(qkv_host())
    try:
        mc.apply_mrope_(qkv[:, :4], qkv[:, 4:6, :64], to_device(positions_host()), MODEL,
                        error_flag=to_device(np.zeros(1, np.int32)))
    except ValueError as error:
        assert "k: expected" in str(error), error
    else:
        raise AssertionError("no ValueError")


if __name__ == "__main__":
    print(f"mrope.cuda device tests: framework {NAME or 'none'}"
          f"{' ' + LIB.__version__ if LIB else ''}")
    if NAME is None:
        print("SKIPPED: no torch or CuPy with a CUDA device")
        sys.exit(0)
    failed = 0
    for name, case in sorted(globals().items()):
        if name.startswith("test_") and callable(case):
            try:
                case()
                print(f"ok     {name}")
            except Exception as error:  # report every case, then fail
                failed += 1
                print(f"FAILED {name}: {type(error).__name__}: {error}")
    print(f"{failed} failed")
    sys.exit(1 if failed else 0)
