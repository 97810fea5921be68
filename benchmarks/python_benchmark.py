#!/usr/bin/env python3
"""mrope's Python call against the same call in C++, in one run.

    benchmarks/python_benchmark.py [--perf-dir ../shared/perf] [--rounds 5]

Builds (bazel -c opt) the extension and //benchmarks:large_prompts_benchmark, then reports:
  * the per-call cost of Model.get_rope_index on a 10-token text prompt (numpy in and out):
    everything a Python caller pays around a computation that costs well under 1 us in C++;
  * the same call through ctypes over the C ABI (mrope_compute_positions), the binding a wheel
    for every CPython (abi3 or pure Python) would need: structs reused, no argument
    conversion, numpy in and out, so a lower bound on that binding's cost;
  * for each large prompt of ../shared/perf (golden format), the time of
    Model.get_rope_index(input_ids, grids, ..., attention_mask=...) on numpy arrays, and of the
    same call in C++ (TokenIds/<prompt>/padded/int64 of large_prompts_benchmark: service
    Compute on the same padded batch), alternating the two over --rounds rounds: the median
    over rounds of each round's fastest repetition (the build machine is shared and loaded),
    in CPU time on both sides, and the difference: what the Python call adds.
Ratios are Python / C++ within this run; absolute times move with machine load.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPP_BENCHMARK = os.path.join(ROOT, "bazel-bin", "benchmarks", "large_prompts_benchmark")


def build():
    subprocess.run(["bazel", "build", "-c", "opt", "--config=quiet", "//python:mrope/_mrope.so",
                    "//benchmarks:large_prompts_benchmark"], cwd=ROOT, check=True)


def import_mrope():
    """Imports mrope from the source package and the freshly built extension."""
    staging = tempfile.mkdtemp(prefix="mrope_benchmark_")
    package = os.path.join(staging, "mrope")
    os.mkdir(package)
    source = os.path.join(ROOT, "python", "mrope")
    for name in os.listdir(source):
        if name.endswith(".py"):
            os.symlink(os.path.join(source, name), os.path.join(package, name))
    os.symlink(os.path.join(ROOT, "bazel-bin", "python", "mrope", "_mrope.so"),
               os.path.join(package, "_mrope.so"))
    sys.path.insert(0, staging)
    import mrope  # pylint: disable=import-outside-toplevel
    return mrope


def per_call_seconds(fn, min_time=0.2):
    """Fastest per-call CPU time of fn over 5 batches of calls, each of about min_time / 5.

    CPU time of this thread (the extension computes on the calling thread, GIL released), as
    Google Benchmark's cpu_time on the C++ side: on a shared machine, wall time also counts
    the time other processes hold the core."""
    calls = 1
    while True:
        start = time.thread_time()
        for _ in range(calls):
            fn()
        elapsed = time.thread_time() - start
        if elapsed >= min_time / 5:
            break
        calls *= 2
    samples = []
    for _ in range(5):
        start = time.thread_time()
        for _ in range(calls):
            fn()
        samples.append((time.thread_time() - start) / calls)
    return min(samples)


def cpp_seconds(perf_dir, prompt):
    """Fastest CPU time per call of TokenIds/<prompt>/padded/int64 over 5 repetitions (s)."""
    result = subprocess.run(
        [CPP_BENCHMARK, f"--benchmark_filter=^TokenIds/{prompt}/padded/int64$",
         "--benchmark_repetitions=5", "--benchmark_min_time=0.04", "--benchmark_format=json"],
        env=dict(os.environ, MROPE_PERF_DIR=perf_dir), capture_output=True, text=True,
        check=True)
    runs = [b for b in json.loads(result.stdout)["benchmarks"]
            if b.get("run_type") == "iteration"]
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3}[runs[0]["time_unit"]]
    return min(b["cpu_time"] for b in runs) * scale


def ctypes_call(mrope, preset, ids):
    """A zero-argument get_rope_index-like call of ``ids`` through ctypes over the C ABI
    (capi/include/mrope/mrope_c.h, mrope_batch and mrope_positions_out version 1)."""
    import ctypes  # pylint: disable=import-outside-toplevel
    import numpy as np  # pylint: disable=import-outside-toplevel
    from mrope import _capi  # pylint: disable=import-outside-toplevel

    class Batch(ctypes.Structure):  # pylint: disable=too-few-public-methods
        _fields_ = [("struct_size", ctypes.c_uint32), ("use_audio_in_video", ctypes.c_int32),
                    ("batch_size", ctypes.c_int64), ("seq_len", ctypes.c_int64),
                    ("input_ids", ctypes.c_void_p)] + [
                        (f"unused_{i}", ctypes.c_int64) for i in range(11)]

    class PositionsOut(ctypes.Structure):  # pylint: disable=too-few-public-methods
        _fields_ = [("struct_size", ctypes.c_uint32), ("position_type", ctypes.c_int32),
                    ("position_ids", ctypes.c_void_p), ("position_ids_capacity", ctypes.c_int64),
                    ("deltas", ctypes.c_void_p), ("deltas_capacity", ctypes.c_int64)]

    lib = _capi.library()
    handle = ctypes.c_void_p()
    _capi.call("mrope_model_load", preset.encode(), ctypes.byref(handle))
    compute = lib.mrope_compute_positions  # no argtypes: no per-argument conversion
    message = ctypes.create_string_buffer(1024)
    batch, out = _capi.new(Batch), _capi.new(PositionsOut)
    batch_ref, out_ref, model = ctypes.byref(batch), ctypes.byref(out), handle
    # The cheapest address of an array's data: c_char.from_buffer (0.35 us) instead of
    # __array_interface__ or .ctypes.data (1 us each); read-only arrays must be copied.
    address = lambda array: ctypes.addressof(ctypes.c_char.from_buffer(array))

    def call():
        input_ids = np.ascontiguousarray(ids, dtype=np.int64)
        if not input_ids.flags.writeable:
            input_ids = input_ids.copy()
        batch.batch_size, batch.seq_len = input_ids.shape
        batch.input_ids = address(input_ids)
        positions = np.empty((3,) + input_ids.shape, dtype=np.int64)
        deltas = np.empty((input_ids.shape[0], 1), dtype=np.int64)
        out.position_ids, out.position_ids_capacity = address(positions), positions.size
        out.deltas, out.deltas_capacity = address(deltas), deltas.size
        if compute(model, batch_ref, out_ref, message, 1024):
            raise ValueError(message.value.decode())
        return positions, deltas

    return call


def large_prompt_call(mrope, case):
    """A zero-argument get_rope_index call on the case's inputs, as numpy arrays."""
    import numpy as np  # pylint: disable=import-outside-toplevel
    # The case's model less its provenance keys (C++ CaseModelOf, mrope/service/case_model.h).
    case_model = mrope._mrope.Model.case_model  # pylint: disable=protected-access
    preset, overrides = case_model(json.dumps(case))
    model = mrope.Model.from_config(preset, overrides=json.loads(overrides))
    inputs = {k: v for k, v in case["inputs"].items() if v is not None}
    ids = np.array(inputs.pop("input_ids"), dtype=np.int64)
    arrays = {}
    for key, value in inputs.items():
        if key in ("second_per_grid_ts", "video_second_per_grid"):
            arrays[key] = np.array(value, dtype=np.float32)
        elif key == "use_audio_in_video":
            arrays[key] = value
        else:
            arrays[key] = np.array(value, dtype=np.int64)
    expected = np.array(case["outputs"]["position_ids"], dtype=np.int64)
    positions, _ = model.get_rope_index(ids, **arrays)
    assert np.array_equal(positions, expected), case["model"]
    return lambda: model.get_rope_index(ids, **arrays)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--perf-dir", default=os.path.join(ROOT, os.pardir, "shared", "perf"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-build", action="store_true", help="use the existing bazel-bin")
    args = parser.parse_args()
    if not args.no_build:
        build()
    mrope = import_mrope()
    import numpy as np  # pylint: disable=import-outside-toplevel

    small_model = mrope.Model.from_config("qwen2_vl")
    small_ids = np.arange(11, 21, dtype=np.int64).reshape(1, 10)
    small = per_call_seconds(lambda: small_model.get_rope_index(small_ids))
    print(f"10-token prompt: {small * 1e6:.2f} us per get_rope_index call from Python "
          "(target <= 3 us)")
    through_c_abi = ctypes_call(mrope, "qwen2_vl", small_ids)
    for got, expected in zip(through_c_abi(), small_model.get_rope_index(small_ids)):
        assert np.array_equal(got, expected)
    small_ctypes = per_call_seconds(through_c_abi)
    print(f"10-token prompt: {small_ctypes * 1e6:.2f} us through ctypes over the C ABI "
          f"({small_ctypes / small:.2f}x the extension's call)")

    prompts = sorted(f[:-5] for f in os.listdir(args.perf_dir)
                     if f.endswith(".json") and not f.endswith("_vllm.json"))
    print(f"\n{'prompt':<22} {'Python us':>10} {'C++ us':>10} {'Python/C++':>11} "
          f"{'Python - C++ us':>16}")
    worst = 0.0
    for prompt in prompts:
        with open(os.path.join(args.perf_dir, prompt + ".json")) as f:
            call = large_prompt_call(mrope, json.load(f))
        python_times, cpp_times = [], []
        for _ in range(args.rounds):
            python_times.append(per_call_seconds(call))
            cpp_times.append(cpp_seconds(args.perf_dir, prompt))
        python_s, cpp_s = statistics.median(python_times), statistics.median(cpp_times)
        worst = max(worst, python_s / cpp_s)
        print(f"{prompt:<22} {python_s * 1e6:>10.2f} {cpp_s * 1e6:>10.2f} "
              f"{python_s / cpp_s:>10.2f}x {(python_s - cpp_s) * 1e6:>16.2f}")
    print(f"\nworst Python/C++ ratio: {worst:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
