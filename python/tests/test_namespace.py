"""The public modules (mrope, mrope.cuda) show their API only: dir() lists no imported modules
(os, ctypes, ...) or helpers without an underscore, and __all__ is the documented API."""
import importlib
import types

import pytest

import mrope
import mrope.cuda  # noqa: F401  (a public submodule: an attribute of mrope once imported)

# The documented API: mrope's docstring and README ("Python"), mrope.cuda's docstring.
DOCUMENTED = {
    "mrope": {"Model", "Plan", "conventions", "presets"},
    "mrope.cuda": {"apply_mrope_", "apply_mrope", "fused_mrope_", "Decode", "cos_sin",
                   "error_flag", "model_key", "ERROR_POSITION_OUT_OF_RANGE",
                   "ERROR_SEQUENCE_OUT_OF_RANGE", "ERROR_SLOT_OUT_OF_RANGE"},
}
PUBLIC_SUBMODULES = {"mrope": {"cuda"}, "mrope.cuda": set()}


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_dir_shows_the_api_only(name):
    module = importlib.import_module(name)
    assert set(module.__all__) == DOCUMENTED[name]
    public = {n for n in dir(module) if not n.startswith("_")}
    assert public == DOCUMENTED[name] | PUBLIC_SUBMODULES[name]
    modules = {n for n in public if isinstance(getattr(module, n), types.ModuleType)}
    assert modules == PUBLIC_SUBMODULES[name]
