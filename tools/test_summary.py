#!/usr/bin/env python3
"""Summarises `bazel test` runs, ending with the line 'N passed, N failed'.

Usage: test_summary.py BAZEL_TEST_LOG BAZEL_EXIT_CODE [--pass NAME --counts FILE]
       test_summary.py --junit NAME XML... [--counts FILE]
       test_summary.py --total FILE

The first form summarises one run (run it right after that run: it reads bazel-testlogs); with
--counts it prefixes its lines with NAME and appends "passed failed skipped" to FILE. The second
form adds up FILE's lines, one per run, into the closing 'N passed, N failed' line. The --junit
form counts the cases of JUnit files written outside Bazel (tools/test_wheel.sh's pytest runs);
a missing file counts as one failure (its step did not run).

Counts one result per gtest case, read from bazel-testlogs/<package>/<name>/test.xml of every
target the log reports. A target that did not build, timed out or has no status counts as one
failure; targets Bazel skipped as incompatible (CUDA targets without nvcc) are listed as skipped.
A failing run with no per-target results at all (e.g. an analysis error) counts as one failure.
Exits 1 when anything failed.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

RESULT = re.compile(r"^(//\S+)\s+(?:\(cached\)\s+)?"
                    r"(PASSED|FAILED TO BUILD|FAILED|FLAKY|TIMEOUT|NO STATUS|SKIPPED|INCOMPLETE)")


def cases(label):
    package, name = label[2:].split(":")
    return junit_cases(os.path.join("bazel-testlogs", package, name, "test.xml"))


def junit_cases(path):
    """(passed, failed, skipped) of a JUnit file, or None if there is none."""
    if not os.path.exists(path):
        return None
    passed = failed = skipped = 0
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.find("skipped") is not None or case.get("result") == "skipped":
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


def total(counts_path):
    sums = [0, 0, 0]
    with open(counts_path) as counts:
        for line in counts:
            sums = [a + int(b) for a, b in zip(sums, line.split())]
    passed, failed, skipped = sums
    print(f"{skipped} skipped in all runs")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def junit(args):
    name, counts_path = args[0], None
    if "--counts" in args:
        counts_path = args[args.index("--counts") + 1]
        args = args[:args.index("--counts")]
    sums = [0, 0, 0]
    for path in args[1:]:
        counted = junit_cases(path)
        if counted is None:
            print(f"{name}: {os.path.basename(path)} missing: its step did not run")
            counted = (0, 1, 0)
        sums = [a + b for a, b in zip(sums, counted)]
    passed, failed, skipped = sums
    print(f"{name}: {skipped} skipped")
    print(f"{name}: {passed} passed, {failed} failed")
    if counts_path:
        with open(counts_path, "a") as counts:
            counts.write(f"{passed} {failed} {skipped}\n")
    return 1 if failed else 0


def main():
    if sys.argv[1] == "--total":
        return total(sys.argv[2])
    if sys.argv[1] == "--junit":
        return junit(sys.argv[2:])
    log_path, bazel_rc = sys.argv[1], int(sys.argv[2])
    options = dict(zip(sys.argv[3::2], sys.argv[4::2]))
    prefix = f"{options['--pass']}: " if "--pass" in options else ""
    passed = failed = skipped = 0
    seen = 0
    with open(log_path, errors="replace") as log:
        for line in log:
            match = RESULT.match(line.strip())
            if not match:
                continue
            label, status = match.groups()
            seen += 1
            if status == "SKIPPED":
                skipped += 1
                continue
            counted = cases(label) if status in ("PASSED", "FAILED", "FLAKY") else None
            if counted is None:
                failed += status != "PASSED"
                passed += status == "PASSED"
                if status != "PASSED":
                    print(f"{label}: {status}")
                continue
            passed, failed, skipped = (passed + counted[0], failed + counted[1],
                                       skipped + counted[2])
            if status == "FAILED" and counted[1] == 0:
                failed += 1  # crashed outside any test case
    if bazel_rc != 0 and seen == 0:
        print("bazel test failed before running any test (see the log above)")
        failed += 1
    print(f"{prefix}{skipped} skipped (GPU tests without a GPU; CUDA targets without nvcc)")
    print(f"{prefix}{passed} passed, {failed} failed")
    if "--counts" in options:
        with open(options["--counts"], "a") as counts:
            counts.write(f"{passed} {failed} {skipped}\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
