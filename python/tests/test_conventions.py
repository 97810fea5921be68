"""Conventions by release (mrope/model/conventions.h): Model.from_config(family,
convention=...) by release, name, alias or "installed", and mrope.conventions()."""
import importlib.metadata

import numpy as np
import pytest

import mrope


def test_release_resolves_to_the_convention_covering_it():
    model = mrope.Model.from_config("qwen2_5_vl", convention="transformers==5.23.0")
    assert (model.name, model.convention) == ("qwen2_5_vl_hf_v5_18", "hf_v5_18")
    model = mrope.Model.from_config("qwen2_5_vl", convention="transformers==5.17.0")
    assert (model.name, model.convention) == ("qwen2_5_vl_hf_v5", "hf_v5")
    # transformers 4 truncates Qwen2.5-VL's video interval first: the qwen2_5_vl_hf preset.
    model = mrope.Model.from_config("qwen2_5_vl", convention="transformers==4.57.6")
    assert (model.name, model.convention) == ("qwen2_5_vl_hf", "hf_v4")
    assert mrope.Model.from_config("glm4v", convention="transformers==5.3.0").name == "glm4v_hf_v5"
    assert mrope.Model.from_config("qwen3_vl", convention="vllm==0.33.0").name == "qwen3_vl_vllm"


def test_release_resolution_keeps_overrides():
    overrides = {"tokens_per_second": 4}
    model = mrope.Model.from_config("qwen2_5_vl", convention="transformers==5.23.0",
                                    overrides=overrides)
    assert model == mrope.Model.from_config("qwen2_5_vl_hf_v5_18", overrides=overrides)
    # Frame k at 0.4 s per grid: trunc(k * 0.4 * 4) from 5.18 (PR #48669), k * trunc(0.4) * 4
    # = 0 before; text after the block resumes at its start + max(h, w) / 2.
    ids = [[151652] + [151656] * 3 + [151653]]
    args = dict(video_grid_thw=[[3, 2, 2]], second_per_grid_ts=[0.4],
                mm_token_type_ids=[[0, 2, 2, 2, 0]])
    positions, _ = model.get_rope_index(ids, **args)
    np.testing.assert_array_equal(np.asarray(positions)[0, 0], [0, 1, 2, 4, 2])
    before = mrope.Model.from_config("qwen2_5_vl", convention="transformers==5.17.0",
                                     overrides=overrides)
    positions, _ = before.get_rope_index(ids, **args)
    np.testing.assert_array_equal(np.asarray(positions)[0, 0], [0, 1, 1, 1, 2])


def test_unverified_release_names_the_verified_ones():
    with pytest.raises(ValueError, match=r"transformers 5\.24\.0 is not a release mrope has "
                                         r"verified for qwen3_5; verified: .*5\.23\.0 "
                                         r"\(transformers-5\.3\)"):
        mrope.Model.from_config("qwen3_5", convention="transformers==5.24.0")
    with pytest.raises(ValueError, match="unknown model family 'qwen2_5_vl_hf'"):
        mrope.Model.from_config("qwen2_5_vl_hf", convention="transformers==5.23.0")
    with pytest.raises(ValueError, match="unknown convention 'hf_v6'"):
        mrope.Model.from_config("qwen2_vl", convention="hf_v6")


def test_names_and_aliases_give_the_same_model():
    by_name = mrope.Model.from_config("qwen2_vl", convention="transformers-5.3")
    assert by_name == mrope.Model.from_config("qwen2_vl", convention="hf_v5")
    assert by_name == mrope.Model.from_config("qwen2_vl_hf_v5")
    assert mrope.Model.from_config("qwen2_vl", convention="hf").convention == "hf_v4"


def test_installed_reads_the_installed_transformers(monkeypatch):
    try:
        installed = importlib.metadata.version("transformers")
    except importlib.metadata.PackageNotFoundError:
        installed = None  # the installed wheel's bare venv (wheel_checks.py): below
    if installed is not None:
        model = mrope.Model.from_config("qwen2_vl", convention="installed")
        assert model == mrope.Model.from_config("qwen2_vl",
                                                convention="transformers==" + installed)

    # A release read from the package metadata picks that release's convention.
    versions = {"transformers": "5.2.0"}
    monkeypatch.setattr(importlib.metadata, "version", lambda name: versions[name])
    assert mrope.Model.from_config("qwen2_vl", convention="installed") == (
        mrope.Model.from_config("qwen2_vl_hf_v5_2"))
    assert mrope.Model.from_config("qwen2_vl", convention="installed") != (
        mrope.Model.from_config("qwen2_vl_hf_v5"))

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    with pytest.raises(ValueError, match="convention='installed' .*transformers is not installed"):
        mrope.Model.from_config("qwen2_vl", convention="installed")


def test_conventions_lists_every_family_and_convention():
    listed = mrope.conventions()
    names = {(c["family"], c["name"]) for c in listed}
    assert len(names) == len(listed)
    entry = next(c for c in listed
                 if (c["family"], c["name"]) == ("qwen2_5_vl", "transformers-5.18"))
    assert entry["aliases"] == ["hf_v5_18", "qwen2_5_vl_hf_v5_18"]
    assert (entry["reference"], entry["first"], entry["last"]) == ("transformers", "5.18.0",
                                                                   "5.23.0")
    assert "release runs" in entry["verified"]
    for c in listed:  # each resolves back: by its first and last release, and by its aliases
        model = mrope.Model.from_config(c["aliases"][1])
        for alias in [c["name"]] + c["aliases"][:1]:
            assert mrope.Model.from_config(c["family"], convention=alias) == model
        if c["first"] is not None:
            for release in (c["first"], c["last"]):
                spec = f"{c['reference']}=={release}"
                assert mrope.Model.from_config(c["family"], convention=spec) == model, spec
