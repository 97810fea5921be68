"""The fused kernel's part of report.md: results of kernels/fused_kernel_benchmark.cc
(fused_benchmark.json), its targets and tables, and the benchmark JSON reader both parts use.
Stdlib only, like report.py."""
import json
import re

NAME = re.compile(r"^([a-z_]+)/([^/]+)/([^/]+)/T:(\d+)(?:/|$)")

# Issue 24's targets: at T >= LARGE_T the fused kernel moves its compulsory bytes at >= 90 % of
# a device copy and is >= 1.8x faster than the unfused chain; replayed from a graph at
# T <= SMALL_T it takes <= 3 µs per call.
MIN_PCT_OF_COPY, MIN_SPEEDUP, LARGE_T = 90.0, 1.8, 4096
MAX_US, SMALL_T = 3.0, 16


def read_rows(path, name):
    """({key: counters}, [errors], context) from a Google Benchmark JSON file, or None. `name`
    (a compiled regex) picks the rows: key is its groups, the last one (T) as an int."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    rows, errors = {}, []
    for b in doc.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue  # aggregates of --benchmark_repetitions
        run = b.get("run_name") or b.get("name", "")
        if b.get("error_occurred") or b.get("skipped"):
            errors.append("%s: %s" % (run, b.get("error_message", "error")))
            continue
        m = name.match(run)
        if m:
            rows[m.groups()[:-1] + (int(m.groups()[-1]),)] = b
    return rows, errors, doc.get("context", {})


def results(path):
    """({(variant, model, cache, T): counters}, [errors], context) of the fused benchmark."""
    return read_rows(path, NAME)


def _worst(rows, variant, key, selects, pick):
    found = [(float(b[key]), model, cache, t) for (v, model, cache, t), b in rows.items()
             if v == variant and selects(t) and key in b]
    return pick(found) if found else None


def target_lines(rows):
    """Markdown lines checking the fused kernel's targets, and whether all hold."""
    checks = [
        ("fused >= %g %% of copy at T >= %d" % (MIN_PCT_OF_COPY, LARGE_T),
         _worst(rows, "fused", "pct_of_copy", lambda t: t >= LARGE_T, min),
         lambda v: v >= MIN_PCT_OF_COPY, "lowest", " %"),
        ("fused >= %gx faster than the unfused chain at T >= %d" % (MIN_SPEEDUP, LARGE_T),
         _worst(rows, "fused", "x_vs_unfused", lambda t: t >= LARGE_T, min),
         lambda v: v >= MIN_SPEEDUP, "lowest", "x"),
        ("fused_graph <= %g µs per call at T <= %d" % (MAX_US, SMALL_T),
         _worst(rows, "fused_graph", "us", lambda t: t <= SMALL_T, max),
         lambda v: v <= MAX_US, "highest", " µs"),
    ]
    lines, ok = [], True
    for title, found, holds, word, unit in checks:
        passed = found is not None and holds(found[0])
        ok = ok and passed
        detail = "no result" if found is None else "%s %.2f%s (%s, %s, T %d)" % (
            word, found[0], unit, found[1], found[2], found[3])
        lines.append("- %s: **%s**, %s" % (title, "PASS" if passed else "FAIL", detail))
    return lines, ok


def _cell(rows, key, counter, digits):
    b = rows.get(key)
    return "-" if b is None or counter not in b else "%.*f" % (digits, float(b[counter]))


def tables(rows, predicted=None):
    """The fused rows by (model, cache, T), then the graph rows, then the unfused steps. With
    `predicted` ({(model, T): %}: the access model's bf16 prediction, for every cache format),
    the predicted fraction of copy next to the measured one."""
    keys = sorted({(m, c, t) for (v, m, c, t) in rows if v == "fused"},
                  key=lambda k: (k[0], k[1], k[2]))
    lines = ["Launched on a stream; GB/s counts the compulsory bytes (q, k, v read; q and the "
             "cache written); % of a copy of the same traffic:", "",
             "| model | cache | T | copy µs | unfused µs | fused µs | fused GB/s "
             "| fused % of copy | fused x vs unfused |" +
             (" fused predicted % (model) |" if predicted is not None else ""),
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |" +
             (" ---: |" if predicted is not None else "")]
    for m, c, t in keys:
        cells = [m, c, str(t)] + [_cell(rows, (v, m, c, t), "us", 2)
                                  for v in ("copy", "unfused", "fused")]
        cells += [_cell(rows, ("fused", m, c, t), "GB_per_s", 1),
                  _cell(rows, ("fused", m, c, t), "pct_of_copy", 1),
                  _cell(rows, ("fused", m, c, t), "x_vs_unfused", 2)]
        if predicted is not None:
            cells.append("-" if (m, t) not in predicted else "%.1f" % predicted[(m, t)])
        lines.append("| " + " | ".join(cells) + " |")
    graph = sorted({(m, c, t) for (v, m, c, t) in rows if v == "fused_graph"})
    if graph:
        lines += ["", "Replayed from a CUDA graph:", "",
                  "| model | cache | T | copy µs | unfused µs | fused µs | fused x vs unfused |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
        for m, c, t in graph:
            cells = [m, c, str(t)] + [_cell(rows, (v + "_graph", m, c, t), "us", 2)
                                      for v in ("copy", "unfused", "fused")]
            cells.append(_cell(rows, ("fused_graph", m, c, t), "x_vs_unfused", 2))
            lines.append("| " + " | ".join(cells) + " |")
    steps = sorted({(m, c, t) for (v, m, c, t) in rows if v == "unfused_norm"})
    if steps:
        lines += ["", "The unfused chain's steps, each against a copy of its own traffic "
                  "(bf16 NHD cache):", "",
                  "| model | T | norm µs | norm % of copy | rope µs | rope % of copy "
                  "| cache append µs | cache append % of copy |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for m, c, t in steps:
            cells = [m, str(t)]
            for v in ("unfused_norm", "unfused_rope", "unfused_cache"):
                cells += [_cell(rows, (v, m, c, t), "us", 2),
                          _cell(rows, (v, m, c, t), "pct_of_copy", 1)]
            lines.append("| " + " | ".join(cells) + " |")
    return lines
