#!/usr/bin/env python3
"""Writes OUT_DIR/report.md for one run of the GPU check (tools/gpu_bundle/run.sh). Stdlib only:
it runs on the GPU machine, which has python3 but no packages.

Usage: report.py BUNDLE_DIR STATE_DIR OUT_DIR

Reads BUNDLE_DIR/VERSION (key=value: how the bundle was built), BUNDLE_DIR/predictions.tsv
(the access model's predicted fraction of copy per kernel, model, T and GPU, from
kernels/host_harness:resource_usage_test; shown next to the measured one), STATE_DIR/meta.tsv
(key<TAB>value: the machine), STATE_DIR/steps.tsv (one line per finished step:
name<TAB>exit code<TAB>detail) and, in OUT_DIR, tests.xml (gtest), benchmark.json and
fused_benchmark.json (Google Benchmark; the fused kernel's part is fused_report.py). run.sh
calls it after every step, so a run cut off midway still leaves a report.

Exits 0 when every step passed and the targets are met, or, on a machine without a CUDA
device (meta key no_device), when the smoke run of the test binary passed; 1 otherwise.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

import fused_report

# c_abi: the C ABI's test on the device (capi/mrope_c_test.c); python_cuda: mrope.cuda's
# device tests with the Python stack found (meta python_stack), which pass as skipped without
# torch or CuPy.
GPU_STEPS = ["tests", "benchmark", "fused_benchmark", "c_abi", "python_cuda", "memcheck",
             "racecheck", "synccheck", "initcheck"]
STREAM_VARIANTS = ["copy", "mrope", "mrope_table", "eager"]
GRAPH_VARIANTS = ["copy_graph", "mrope_graph"]
NAME = re.compile(r"^(copy|mrope|mrope_table|eager|copy_graph|mrope_graph)/([^/]+)/T:(\d+)(?:/|$)")

# Issue targets for the kernel (kernels/BENCHMARKS.md): bandwidth on `mrope` (cos/sin from
# inv_freq, launched on a stream); time per call at small T on `mrope_graph` (the same launches
# replayed from a CUDA graph, as decode runs in vLLM, SGLang and TensorRT-LLM: a stream of
# launches times the host's launch rate there, not the kernel). The other variants are shown
# against the same bounds for information.
MIN_PCT_OF_COPY, LARGE_T = 90.0, 8192
MAX_US, SMALL_T = 3.0, 16
TARGETS = [  # (variant, counter, binding)
    ("mrope", "pct_of_copy", True),
    ("mrope_graph", "us", True),
    ("mrope_table", "pct_of_copy", False),
    ("mrope", "us", False),
]


def read_pairs(path, sep):
    pairs = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                key, _, value = line.rstrip("\n").partition(sep)
                if key:
                    pairs[key] = value
    return pairs


def read_steps(path):
    steps = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                name, rc, detail = (line.rstrip("\n").split("\t", 2) + ["", ""])[:3]
                steps[name] = (int(rc), detail)
    return steps


def gtest_results(path):
    """(passed, failed names, skipped names) from a gtest XML file, or None."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    passed, failed, skipped = 0, [], []
    for case in root.iter("testcase"):
        name = "%s.%s" % (case.get("classname"), case.get("name"))
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(name)
        elif case.find("skipped") is not None or case.get("result") == "skipped":
            skipped.append(name)
        elif case.get("status", "run") == "run":
            passed += 1
    return passed, failed, skipped


def benchmark_results(path):
    """({(variant, model, T): counters}, [errors], context) from benchmark JSON, or None."""
    return fused_report.read_rows(path, NAME)


def read_predictions(path, device):
    """{(kernel, model, T): predicted %} for the GPU `device` names (H100 or H200), from
    predictions.tsv (kernel<TAB>model<TAB>T<TAB>GPU<TAB>%); {} for another GPU or no file."""
    gpu = "H200" if "H200" in (device or "") else "H100 SXM" if "H100" in (device or "") else None
    found = {}
    if gpu is None or not os.path.exists(path):
        return found
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) == 5 and fields[3] == gpu:
                found[(fields[0], fields[1], int(fields[2]))] = float(fields[4])
    return found


def fmt(value, digits):
    return "-" if value is None else "%.*f" % (digits, value)


def counter(rows, variant, model, tokens, key):
    b = rows.get((variant, model, tokens))
    return None if b is None or key not in b else float(b[key])


def worst(rows, variant, key, selects, pick):
    """(value, model, T) of `variant`'s worst `key` over the T that `selects`, or None."""
    found = [(float(b[key]), model, t) for (v, model, t), b in rows.items()
             if v == variant and selects(t) and key in b]
    return pick(found) if found else None


def target_lines(rows):
    """Markdown lines checking the targets, and whether the binding ones hold."""
    lines, ok = [], True
    for variant, key, binding in TARGETS:
        if key == "pct_of_copy":
            title = "%s >= %g %% of copy at T >= %d" % (variant, MIN_PCT_OF_COPY, LARGE_T)
            found = worst(rows, variant, key, lambda t: t >= LARGE_T, min)
            passed = found is not None and found[0] >= MIN_PCT_OF_COPY
            word, unit = "lowest", " %"
        else:
            title = "%s <= %g µs per call at T <= %d" % (variant, MAX_US, SMALL_T)
            found = worst(rows, variant, key, lambda t: t <= SMALL_T, max)
            passed = found is not None and found[0] <= MAX_US
            word, unit = "highest", " µs"
        detail = "no result" if found is None else "%s %.2f%s (%s, T %d)" % (
            word, found[0], unit, found[1], found[2])
        if binding:
            ok = ok and passed
            verdict = "PASS" if passed else "FAIL"
        else:
            verdict = "info: " + ("meets it" if passed else "misses it")
        lines.append("- %s: **%s**, %s" % (title, verdict, detail))
    return lines, ok


def benchmark_table(rows, variants, predicted=None):
    """One row per (model, T) with a result of `variants[0]`: µs of each variant, GB/s of the
    second and % of copy of all but the first (the copy itself); with `predicted` ({(model, T):
    %}), the model's prediction for the second next to its measured % of copy."""
    models = []
    for _, model, _ in sorted(rows, key=lambda k: k[2]):
        if model not in models:
            models.append(model)
    columns = (["model", "T"] + ["%s µs" % v for v in variants] + ["%s GB/s" % variants[1]] +
               ["%s %% of copy" % v for v in variants[1:]])
    if predicted is not None:
        columns.append("%s predicted %% (model)" % variants[1])
    lines = ["| " + " | ".join(columns) + " |",
             "| --- |" + " ---: |" * (len(columns) - 1)]
    for model in models:
        for t in sorted({t for (v, m, t) in rows if m == model and v == variants[0]}):
            cells = [model, str(t)]
            cells += [fmt(counter(rows, v, model, t, "us"), 2) for v in variants]
            cells.append(fmt(counter(rows, variants[1], model, t, "GB_per_s"), 1))
            cells += [fmt(counter(rows, v, model, t, "pct_of_copy"), 1) for v in variants[1:]]
            if predicted is not None:
                cells.append(fmt(predicted.get((model, t)), 1))
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def tests_verdict(steps, results, require_gpu):
    rc, _ = steps["tests"]
    if results is None:
        return False, "no tests.xml (exit code %d), see tests.log" % rc
    passed, failed, skipped = results
    detail = "%d passed, %d failed, %d skipped" % (passed, len(failed), len(skipped))
    if failed:
        detail += ": " + ", ".join(failed[:10]) + (" ..." if len(failed) > 10 else "")
    if skipped and require_gpu:
        detail += " (a skip is a failure on a GPU machine: %s)" % ", ".join(skipped[:3])
    ok = rc == 0 and not failed and not (skipped and require_gpu)
    if rc != 0 and not failed:
        detail += " (exit code %d, see tests.log)" % rc
    return ok, detail


def main(bundle_dir, state_dir, out_dir):
    version = read_pairs(os.path.join(bundle_dir, "VERSION"), "=")
    meta = read_pairs(os.path.join(state_dir, "meta.tsv"), "\t")
    steps = read_steps(os.path.join(state_dir, "steps.tsv"))
    tests = gtest_results(os.path.join(out_dir, "tests.xml"))
    bench = benchmark_results(os.path.join(out_dir, "benchmark.json"))
    fused = fused_report.results(os.path.join(out_dir, "fused_benchmark.json"))
    no_device = meta.get("no_device")
    device = meta.get("device") or (bench[2].get("device") if bench else None)
    predicted = read_predictions(os.path.join(bundle_dir, "predictions.tsv"), device)

    build = [
        ("commit", "%s (%s)" % (version.get("commit", "?"), version.get("tree", "?"))),
        ("built", "%s with nvcc %s" % (version.get("built", "?"), version.get("nvcc", "?"))),
        ("date (UTC)", meta.get("date", "?")),
    ]
    if no_device:
        header = [("device", "none")] + build
    else:
        header = [
            ("device", device or "?"),
            ("driver", "%s (supports CUDA %s)" % (meta.get("driver", "?"),
                                                  meta.get("driver_cuda") or "?")),
            ("compute-sanitizer", meta.get("sanitizer", "not found")),
            ("GPU code in the binaries", meta.get("gpu_code") or "?"),
            ("Python stack for mrope.cuda", meta.get("python_stack", "?")),
        ] + build
    lines = ["# mrope GPU check", "", "| | |", "| --- | --- |"]
    lines += ["| %s | %s |" % row for row in header]
    lines.append("")

    if no_device:
        ok, detail = tests_verdict(steps, tests, False) if "tests" in steps else (False, "not run")
        lines += [
            "**no CUDA device** (%s) Nothing was measured; run it on a GPU machine "
            "(kernels/BENCHMARKS.md, \"The GPU check in one command\")." % no_device,
            "",
            "Smoke run of the bundle's test binary (GPU tests skip here): %s, %s." %
            ("PASS" if ok else "FAIL", detail),
        ]
        write(out_dir, lines)
        return 0 if ok else 1

    summary, all_ok = [], True
    for name in GPU_STEPS:
        if name not in steps:
            ok, detail = False, "not run (the run was cut off before this step)"
        elif name == "tests":
            ok, detail = tests_verdict(steps, tests, True)
        elif name in ("benchmark", "fused_benchmark"):
            rc, detail = steps[name]
            found = bench if name == "benchmark" else fused
            if found is None:
                ok, detail = False, "no %s.json (exit code %d), see %s.log" % (name, rc, name)
            else:
                rows, errors = found[0], found[1]
                ok = rc == 0 and bool(rows) and not errors
                detail = "%d results, %d errors" % (len(rows), len(errors))
                if errors:
                    detail += ": " + "; ".join(errors[:3])
        else:
            rc, detail = steps[name]
            ok = rc == 0
            detail = "%s (exit code %d)" % (detail or "no summary line", rc)
        all_ok = all_ok and ok
        summary.append("| %s | %s | %s |" % (name, "PASS" if ok else "FAIL", detail))

    targets, targets_ok = target_lines(bench[0] if bench else {})
    fused_targets, fused_ok = fused_report.target_lines(fused[0] if fused else {})
    targets += ["", "The fused kernel:", ""] + fused_targets
    all_ok = all_ok and targets_ok and fused_ok
    lines += ["## Result: %s" % ("PASS" if all_ok else "FAIL"), "",
              "| step | result | detail |", "| --- | --- | --- |"] + summary
    lines += ["", "## Targets", ""] + targets
    if bench and bench[0]:
        lines += ["", "## Benchmark", "",
                  "Per call; GB/s counts 2 x the q+k bytes (read + write); % of copy = copy time / "
                  "time x 100.", "", "Launched on a stream:", ""]
        lines += benchmark_table(bench[0], STREAM_VARIANTS, {
            (m, t): pct for (k, m, t), pct in predicted.items() if k == "mrope"} or None)
        if any(v == GRAPH_VARIANTS[0] for v, _, _ in bench[0]):
            lines += ["", "Replayed from a CUDA graph (time on the GPU, without the host's "
                      "launch cost; % of the graph-replayed copy):", ""]
            lines += benchmark_table(bench[0], GRAPH_VARIANTS)
    if fused and fused[0]:
        lines += ["", "## Fused kernel benchmark", ""] + fused_report.tables(fused[0], {
            (m, t): pct for (k, m, t), pct in predicted.items() if k == "fused"} or None)
    lines += ["", "Logs next to this report: tests.log, sanitizers.log, benchmark.log, "
              "fused_benchmark.log, c_abi.log, python_cuda.log; raw: tests.xml, benchmark.json, "
              "fused_benchmark.json."]
    write(out_dir, lines)
    return 0 if all_ok else 1


def write(out_dir, lines):
    path = os.path.join(out_dir, "report.md")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)  # a run cut off mid-write keeps the previous report


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
