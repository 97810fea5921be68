#!/usr/bin/env python3
"""report.py on synthetic runs: a gtest XML and a benchmark JSON with the benchmark's names and
counters (kernels/mrope_kernel_benchmark.cc)."""
import json
import os
import tempfile
import unittest

import report

STEPS = ["tests\t0\t", "benchmark\t0\t", "fused_benchmark\t0\t"] + [
    "%s\t0\t========= ERROR SUMMARY: 0 errors; 150 tests ran" % tool
    for tool in ("memcheck", "racecheck", "synccheck", "initcheck")
] + ["c_abi\t0\t0 of 4 cases failed", "python_cuda\t0\t0 failed"]


def bench_entry(variant, model, tokens, us, copy_us):
    return {
        "name": "%s/%s/T:%d/iterations:20/manual_time" % (variant, model, tokens),
        "run_name": "%s/%s/T:%d/iterations:20/manual_time" % (variant, model, tokens),
        "run_type": "iteration",
        "iterations": 20,
        "us": us,
        "GB_per_s": 1000.0 * tokens / us,
        "pct_of_copy": 100.0 * copy_us / us,
    }


def benchmark_json(us_at):
    """Two models, T 16 and 8192, graph rows at T 16 only; us_at(variant, model, T) gives the
    time per call."""
    entries = []
    for model in ("Qwen2-VL-7B", "Qwen2.5-VL-72B"):
        for tokens in (16, 8192):
            for variant in ("copy", "mrope", "mrope_table", "eager"):
                entries.append(bench_entry(variant, model, tokens, us_at(variant, model, tokens),
                                           us_at("copy", model, tokens)))
            if tokens == 16:
                for variant in ("copy_graph", "mrope_graph"):
                    entries.append(bench_entry(variant, model, tokens,
                                               us_at(variant, model, tokens),
                                               us_at("copy_graph", model, tokens)))
    return {"context": {"device": "NVIDIA H100 80GB HBM3"}, "benchmarks": entries}


def fused_json(us_at):
    """The fused benchmark's rows for one model and cache at T 16 and 4096, graph rows at 16;
    us_at(variant, T) gives the time per call."""
    entries = []
    for tokens in (16, 4096):
        for graph in ("", "_graph") if tokens == 16 else ("",):
            copy_us, unfused_us = us_at("copy", tokens), us_at("unfused", tokens)
            for variant in ("copy", "unfused", "fused"):
                us = us_at(variant + graph, tokens)
                name = "%s%s/Qwen3-VL-8B/fp8_HND/T:%d/iterations:20/manual_time" % (
                    variant, graph, tokens)
                entry = {"name": name, "run_name": name, "run_type": "iteration", "us": us,
                         "GB_per_s": 100.0 * tokens / us, "pct_of_copy": 100.0 * copy_us / us}
                if variant == "fused":
                    entry["x_vs_unfused"] = unfused_us / us
                entries.append(entry)
    return {"benchmarks": entries}


def good_fused_times(variant, tokens):
    return {"copy": 100.0, "unfused": 220.0, "fused": 105.0, "copy_graph": 1.0,
            "unfused_graph": 5.0, "fused_graph": 2.5}[variant] * (1 if tokens == 4096 else 0.01)


def good_times(variant, model, tokens):
    big = model == "Qwen2.5-VL-72B"
    copy = (2.0 if tokens == 16 else 400.0) * (1.2 if big else 1.0)
    return {"copy": copy, "mrope": copy * (1.08 if big else 1.05), "mrope_table": copy * 1.04,
            "eager": copy * 9, "copy_graph": 1.0, "mrope_graph": 2.2 if big else 2.0}[variant]


def gtest_xml(passed=3, skipped=0, failed=0):
    cases = ['<testcase name="Ok%d" classname="KernelPathTest" status="run" result="completed"/>'
             % i for i in range(passed)]
    cases += ['<testcase name="Skip%d" classname="KernelErrorTest" status="run" '
              'result="skipped"><skipped message="no CUDA device"/></testcase>' % i
              for i in range(skipped)]
    cases += ['<testcase name="Bad%d" classname="KernelGridTest" status="run" result="completed">'
              '<failure message="mismatch"/></testcase>' % i for i in range(failed)]
    return '<testsuites><testsuite name="s">%s</testsuite></testsuites>' % "".join(cases)


class ReportTest(unittest.TestCase):

    def run_report(self, steps=STEPS, meta="device\tNVIDIA H100 80GB HBM3\ndriver\t570.86\n",
                   xml=None, bench=None, fused=None, predictions=None):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        root = tmp.name
        with open(os.path.join(root, "VERSION"), "w") as f:
            f.write("commit=abc123\ntree=clean\nbuilt=2025-01-01T00:00:00Z\nnvcc=13.0.88\n")
        with open(os.path.join(root, "meta.tsv"), "w") as f:
            f.write(meta)
        with open(os.path.join(root, "steps.tsv"), "w") as f:
            f.write("".join(line + "\n" for line in steps))
        with open(os.path.join(root, "tests.xml"), "w") as f:
            f.write(xml if xml is not None else gtest_xml())
        with open(os.path.join(root, "benchmark.json"), "w") as f:
            json.dump(bench if bench is not None else benchmark_json(good_times), f)
        with open(os.path.join(root, "fused_benchmark.json"), "w") as f:
            json.dump(fused if fused is not None else fused_json(good_fused_times), f)
        if predictions is not None:
            with open(os.path.join(root, "predictions.tsv"), "w") as f:
                f.write(predictions)
        rc = report.main(root, root, root)
        with open(os.path.join(root, "report.md"), encoding="utf-8") as f:
            return rc, f.read()

    def test_passing_run(self):
        rc, md = self.run_report()
        self.assertEqual(rc, 0)
        self.assertIn("## Result: PASS", md)
        self.assertIn("| device | NVIDIA H100 80GB HBM3 |", md)
        self.assertIn("| commit | abc123 (clean) |", md)
        self.assertIn("| tests | PASS | 3 passed, 0 failed, 0 skipped |", md)
        self.assertIn("| racecheck | PASS | ========= ERROR SUMMARY: 0 errors; 150 tests ran "
                      "(exit code 0) |", md)
        self.assertIn("| benchmark | PASS | 20 results, 0 errors |", md)
        self.assertIn("| c_abi | PASS | 0 of 4 cases failed (exit code 0) |", md)
        # model, T, copy / mrope / mrope_table / eager us, mrope GB/s, % of copy x 3
        self.assertIn("| Qwen2-VL-7B | 8192 | 400.00 | 420.00 | 416.00 | 3600.00 | 19504.8 "
                      "| 95.2 | 96.2 | 11.1 |", md)
        self.assertLess(md.index("| Qwen2-VL-7B | 16 |"), md.index("| Qwen2-VL-7B | 8192 |"))
        self.assertLess(md.index("| Qwen2-VL-7B | 8192 |"), md.index("| Qwen2.5-VL-72B | 16 |"))
        self.assertIn("- mrope >= 90 % of copy at T >= 8192: **PASS**, lowest 92.59 % "
                      "(Qwen2.5-VL-72B, T 8192)", md)
        self.assertIn("- mrope_graph <= 3 µs per call at T <= 16: **PASS**, highest 2.20 µs "
                      "(Qwen2.5-VL-72B, T 16)", md)
        self.assertIn("- mrope <= 3 µs per call at T <= 16: **info: meets it**, highest 2.59 µs "
                      "(Qwen2.5-VL-72B, T 16)", md)
        # the graph table: copy_graph / mrope_graph us, mrope_graph GB/s, % of copy_graph
        self.assertIn("| Qwen2-VL-7B | 16 | 1.00 | 2.00 | 8000.0 | 50.0 |", md)
        self.assertLess(md.index("Launched on a stream:"), md.index("Replayed from a CUDA graph"))

    def test_fused_targets_and_table(self):
        rc, md = self.run_report()
        self.assertEqual(rc, 0)
        self.assertIn("| fused_benchmark | PASS | 9 results, 0 errors |", md)
        self.assertIn("- fused >= 90 % of copy at T >= 4096: **PASS**, lowest 95.24 % "
                      "(Qwen3-VL-8B, fp8_HND, T 4096)", md)
        self.assertIn("- fused >= 1.8x faster than the unfused chain at T >= 4096: **PASS**, "
                      "lowest 2.10x (Qwen3-VL-8B, fp8_HND, T 4096)", md)
        self.assertIn("| Qwen3-VL-8B | fp8_HND | 4096 | 100.00 | 220.00 | 105.00 | 3901.0 | 95.2 "
                      "| 2.10 |", md)

        def slow(variant, tokens):
            return 180.0 if variant == "fused" and tokens == 4096 else good_fused_times(
                variant, tokens)
        rc, md = self.run_report(fused=fused_json(slow))
        self.assertEqual(rc, 1)
        self.assertIn("- fused >= 1.8x faster than the unfused chain at T >= 4096: **FAIL**, "
                      "lowest 1.22x", md)

    def test_predicted_fractions_next_to_the_measured_ones(self):
        predictions = ("mrope\tQwen2-VL-7B\t8192\tH100 SXM\t86.2\n"
                       "mrope\tQwen2-VL-7B\t8192\tH200\t81.0\n"
                       "fused\tQwen3-VL-8B\t4096\tH100 SXM\t94.0\n"
                       "fused\tQwen3-VL-8B\t4096\tH200\t93.0\n")
        rc, md = self.run_report(predictions=predictions)
        self.assertEqual(rc, 0)
        self.assertIn("| mrope % of copy | mrope_table % of copy | eager % of copy "
                      "| mrope predicted % (model) |", md)
        self.assertIn("| Qwen2-VL-7B | 8192 | 400.00 | 420.00 | 416.00 | 3600.00 | 19504.8 "
                      "| 95.2 | 96.2 | 11.1 | 86.2 |", md)
        self.assertIn("| Qwen2-VL-7B | 16 | 2.00 | 2.10 | 2.08 | 18.00 | 7619.0 | 95.2 | 96.2 "
                      "| 11.1 | - |", md)
        self.assertIn("| Qwen3-VL-8B | fp8_HND | 4096 | 100.00 | 220.00 | 105.00 | 3901.0 | 95.2 "
                      "| 2.10 | 94.0 |", md)
        # The H200's figures on an H200; no column for a GPU without predictions.
        rc, md = self.run_report(predictions=predictions, meta="device\tNVIDIA H200\n")
        self.assertIn("| 95.2 | 96.2 | 11.1 | 81.0 |", md)
        self.assertIn("| 2.10 | 93.0 |", md)
        rc, md = self.run_report(predictions=predictions, meta="device\tNVIDIA A100-SXM4\n")
        self.assertNotIn("predicted", md)

    def test_missed_targets_fail_the_run(self):
        def slow(variant, model, tokens):
            if variant == "mrope" and model == "Qwen2-VL-7B":
                return 4.2 if tokens == 16 else 500.0
            if variant == "mrope_graph" and model == "Qwen2-VL-7B":
                return 3.5
            return good_times(variant, model, tokens)
        rc, md = self.run_report(bench=benchmark_json(slow))
        self.assertEqual(rc, 1)
        self.assertIn("## Result: FAIL", md)
        self.assertIn("| benchmark | PASS |", md)
        self.assertIn("- mrope >= 90 % of copy at T >= 8192: **FAIL**, lowest 80.00 % "
                      "(Qwen2-VL-7B, T 8192)", md)
        self.assertIn("- mrope_graph <= 3 µs per call at T <= 16: **FAIL**, highest 3.50 µs "
                      "(Qwen2-VL-7B, T 16)", md)
        self.assertIn("- mrope <= 3 µs per call at T <= 16: **info: misses it**, highest 4.20 µs "
                      "(Qwen2-VL-7B, T 16)", md)
        self.assertIn("- mrope_table >= 90 % of copy at T >= 8192: **info: meets it**", md)

    def test_skipped_or_failed_tests_fail_on_a_gpu_machine(self):
        rc, md = self.run_report(xml=gtest_xml(passed=2, skipped=1))
        self.assertEqual(rc, 1)
        self.assertIn("| tests | FAIL | 2 passed, 0 failed, 1 skipped (a skip is a failure", md)
        steps = ["tests\t1\t"] + STEPS[1:]
        rc, md = self.run_report(steps=steps, xml=gtest_xml(failed=1))
        self.assertEqual(rc, 1)
        self.assertIn("| tests | FAIL | 3 passed, 1 failed, 0 skipped: KernelGridTest.Bad0 |", md)

    def test_sanitizer_errors_and_benchmark_errors_fail(self):
        steps = list(STEPS)
        steps[3] = "memcheck\t1\t========= ERROR SUMMARY: 2 errors; 150 tests ran"
        bench = benchmark_json(good_times)
        bench["benchmarks"][1].update(error_occurred=True, error_message="kernel launch failed")
        rc, md = self.run_report(steps=steps, bench=bench)
        self.assertEqual(rc, 1)
        self.assertIn("| memcheck | FAIL | ========= ERROR SUMMARY: 2 errors", md)
        self.assertIn("| benchmark | FAIL | 19 results, 1 errors: "
                      "mrope/Qwen2-VL-7B/T:16/iterations:20/manual_time: kernel launch failed |",
                      md)

    def test_run_cut_off_midway(self):
        rc, md = self.run_report(steps=STEPS[:3])
        self.assertEqual(rc, 1)
        self.assertIn("| racecheck | FAIL | not run (the run was cut off before this step) |", md)

    def test_no_cuda_device(self):
        rc, md = self.run_report(steps=["tests\t0\t"], meta="no_device\tnvidia-smi not found\n",
                                 xml=gtest_xml(passed=2, skipped=5))
        self.assertEqual(rc, 0)
        self.assertIn("| device | none |", md)
        self.assertIn("**no CUDA device** (nvidia-smi not found)", md)
        self.assertIn("PASS, 2 passed, 0 failed, 5 skipped", md)
        self.assertNotIn("## Benchmark", md)


if __name__ == "__main__":
    unittest.main()
