#!/usr/bin/env python3
"""Which mrope convention reproduces each transformers release, found by running the releases.

For each release given, pip-installs transformers==RELEASE --no-deps into
~/.cache/mrope-pyenv/reference-releases/transformers-RELEASE (the wheel from the package index, kept in
the pyenv's wheelhouse; torch, numpy and the 5.x dependencies from the pinned test environment,
a 4.x release's from its targets/transformers4, plus what the release's import asks for: a
missing package into reference-releases/deps-<major>, a version its check rejects beside it), runs the differential tests' runner (python/tests/reference_runner.py) on
the seeded prompts of every family (python/tests/reference_prompts.py, as the tests make them
for that release) and compares the results bit for bit with mrope under each convention mrope
lists for the family (mrope.conventions()). A release's outputs are cached beside it.

    bazel build --config=ci //python:mrope/_mrope.so
    tools/reference_releases.py [--cases N] [--seed S] [--json] RELEASE... | --last-patches A B

--last-patches 4.45 5.23: every minor's last patch from 4.45 to 5.23, as the index lists them.
Prints per family and release the conventions that agree on every prompt ("-": none, with the
fields that differ under the nearest; for Qwen2.5-VL also each convention with the other video
time rounding, "+scale_then_truncate"); the ranges go to the release table in
mrope/model/model_family.cc (README, "Conventions").
"""
import argparse
import importlib.util
import json
import os
import pickle
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(REPO, "python", "tests"), os.path.join(REPO, "python")]
# The extension Bazel built, in place of the one python/mrope/ lacks.
_spec = importlib.util.spec_from_file_location(
    "mrope._mrope", os.path.join(REPO, "bazel-bin", "python", "mrope", "_mrope.so"))
sys.modules["mrope._mrope"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sys.modules["mrope._mrope"])

import mrope  # noqa: E402
import reference_env  # noqa: E402
import reference_prompts  # noqa: E402
import test_reference_transformers as differential  # noqa: E402


def _version(text):
    return tuple(int(p) for p in text.split("."))


def _pip(*args):
    return subprocess.run([os.path.join(reference_env.env_dir(), "bin", "pip"), *args],
                          check=True, capture_output=True, text=True).stdout


def last_patches(first, last):
    """Each minor's last patch between minors `first` and `last` ("4.45", "5.23")."""
    text = _pip("index", "versions", "transformers")
    listed = re.search(r"Available versions: (.*)", text).group(1).split(", ")
    latest = {}
    for release in listed:
        if re.fullmatch(r"\d+\.\d+\.\d+", release):
            v = _version(release)
            if _version(first) <= v[:2] <= _version(last) and v > latest.get(v[:2], (0,)):
                latest[v[:2]] = v
    return [".".join(map(str, latest[k])) for k in sorted(latest)]


def release_dir(release):
    """The release's target directory, installed on first use."""
    env = reference_env.env_dir()
    target = os.path.join(os.path.dirname(env), "reference-releases", "transformers-" + release)
    if os.path.exists(os.path.join(target, ".complete")):
        return target
    wheels = os.path.join(os.path.dirname(env), "wheels")
    _pip("download", "-q", "--no-deps", "-d", wheels, "transformers==" + release)
    # --no-compile: byte-compiling every module took most of an install; imports compile theirs.
    _pip("install", "-q", "--no-deps", "--no-compile", "--no-index", "--find-links", wheels,
         "--target", target, "transformers==" + release)
    # An older release checks its dependencies' versions at import, or imports one the pinned
    # environment lacks: install what it names, as its own dependency table pins it; a missing
    # package into the directory the releases of its major version share (one install for
    # all), a version it rejects into its own directory (first on the path).
    for _ in range(10):
        check = subprocess.run([os.path.join(env, "bin", "python"), "-c", "import transformers"],
                               capture_output=True, text=True, env=_environ(release, target))
        rejected = re.search(r"(\S+?[<>=!~][^ ]*) is required for a normal functioning",
                             check.stderr)
        missing = re.search(r"No module named '([\w-]+)'", check.stderr)
        if check.returncode == 0 or not (rejected or missing):
            break
        requirement = _pinned_by(target, (rejected or missing).group(1))
        _pip("download", "-q", "--no-deps", "-d", wheels, requirement)
        _pip("install", "-q", "--no-deps", "--no-index", "--find-links", wheels, "--target",
             target if rejected else _shared_deps(release), "--upgrade", requirement)
    open(os.path.join(target, ".complete"), "w").close()
    return target


def _pinned_by(target, requirement):
    """`requirement`, or for a bare package name the release's own pin of it."""
    table = os.path.join(target, "transformers", "dependency_versions_table.py")
    if re.fullmatch(r"[\w-]+", requirement) and os.path.exists(table):
        pinned = re.search(r'"%s": "([^"]+)"' % re.escape(requirement), open(table).read())
        if pinned:
            return pinned.group(1)
    return requirement


def _shared_deps(release):
    return os.path.join(os.path.dirname(reference_env.env_dir()), "reference-releases",
                        "deps-" + release.split(".")[0])


def _environ(release, target):
    paths = [target, _shared_deps(release)]
    if _version(release) < (5,):  # 4.x's dependencies (huggingface_hub 0.x, tokenizers)
        paths.append(os.path.join(reference_env.env_dir(), "targets", "transformers4"))
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths))


def reference_outputs(release, cases, seed):
    """{"version", "results": {family: [...]}, "sources", "prompts": {family: [...]}}."""
    target = release_dir(release)
    cached = os.path.join(target, f"outputs-{cases}-{seed}.pickle")
    if os.path.exists(cached):
        with open(cached, "rb") as f:
            return pickle.load(f)
    version = _version(release)
    prompts = {f: reference_prompts.random_prompts(f, version, cases, seed)
               for f in differential.FAMILIES}
    request = {"decode_steps": differential.DECODE_STEPS, "skip_absent": True,
               "families": {f: (reference_prompts.FAMILY_CONFIG[f], prompts[f])
                            for f in differential.FAMILIES}}
    process = subprocess.run(
        [os.path.join(reference_env.env_dir(), "bin", "python"),
         os.path.join(REPO, "python", "tests", "reference_runner.py")],
        input=pickle.dumps(request), capture_output=True, env=_environ(release, target))
    if process.returncode != 0:
        raise RuntimeError(f"transformers {release}: {process.stderr.decode()[-2000:]}")
    outputs = pickle.loads(process.stdout)
    outputs["prompts"] = {f: prompts[f] for f in outputs["results"]}
    with open(cached, "wb") as f:
        pickle.dump(outputs, f)
    return outputs


def agreement(family, convention, overrides, prompts, results):
    """The fields in which mrope under `convention` (and preset `overrides`) differs from the
    release on some prompt (["error"] where the release failed on one, as 5.3.0's Qwen2.5-VL,
    Qwen3-VL and Qwen3.5 do on many video prompts)."""
    fields = set()
    for prompt, theirs in zip(prompts, results):
        if "error" in theirs:
            fields.add("error")
            continue
        try:
            ours = differential.mrope_outputs(family, convention, prompt, overrides)
        except ValueError:
            fields.add("refused")
            continue
        fields.update(differential.differing_fields(ours, theirs, prompt))
    return sorted(fields)


def candidates(family, conventions):
    """(label, convention, overrides): the family's conventions, and where the family reads
    tokens_per_second (Qwen2.5-VL) each with the other video time rounding too."""
    out = [(c, c, None) for c in conventions]
    if "tokens_per_second" in reference_prompts.FAMILY_CONFIG[family]:
        for c in conventions:
            for rounding in ("scale_then_truncate", "truncate_interval_first"):
                out.append((f"{c}+{rounding}", c, {"video_time_rounding": rounding}))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("releases", nargs="*")
    parser.add_argument("--last-patches", nargs=2, metavar=("FIRST", "LAST"))
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    releases = args.releases + (last_patches(*args.last_patches) if args.last_patches else [])
    conventions = {}
    for c in mrope.conventions():
        conventions.setdefault(c["family"], []).append(c["name"])
    report = []
    for release in releases:
        outputs = reference_outputs(release, args.cases, args.seed)
        for family, results in outputs["results"].items():
            tried = {label: agreement(family, c, overrides, outputs["prompts"][family], results)
                     for label, c, overrides in candidates(family, conventions[family])}
            row = {"release": release, "family": family,
                   "reproduced_by": [c for c, fields in tried.items() if not fields],
                   "nearest": min(tried.items(), key=lambda item: len(item[1]))}
            report.append(row)
            if not args.json:
                agree = ", ".join(row["reproduced_by"]) or "- ({}: {})".format(
                    row["nearest"][0], ", ".join(row["nearest"][1]))
                print(f"{release:8} {family:16} {agree}", flush=True)
    if args.json:
        json.dump(report, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
