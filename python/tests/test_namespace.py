"""The public modules (mrope, mrope.cuda, mrope.integrations.transformers) show their API
only: dir() lists no imported modules (os, ctypes, ...) or helpers without an underscore, and
__all__ is the documented API."""
import ast
import importlib
import os
import types

import pytest

import mrope
import mrope.cuda  # noqa: F401  (a public submodule: an attribute of mrope once imported)
import mrope.integrations.transformers  # noqa: F401  (imports no transformers)

# The documented API: mrope's docstring and README ("Python"), mrope.cuda's docstring.
DOCUMENTED = {
    "mrope": {"Model", "Plan", "conventions", "presets"},
    "mrope.cuda": {"available", "apply_mrope_", "apply_mrope", "fused_mrope_", "Decode", "cos_sin",
                   "error_flag", "model_key", "ERROR_POSITION_OUT_OF_RANGE",
                   "ERROR_SEQUENCE_OUT_OF_RANGE", "ERROR_SLOT_OUT_OF_RANGE"},
    "mrope.integrations.transformers": {"enable", "disable", "use", "preset_for", "FAMILIES",
                                        "MropeTransformersWarning"},
}
PUBLIC_SUBMODULES = {"mrope": {"cuda", "integrations"}, "mrope.cuda": set(),
                     "mrope.integrations.transformers": set()}


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_dir_shows_the_api_only(name):
    module = importlib.import_module(name)
    assert set(module.__all__) == DOCUMENTED[name]
    public = {n for n in dir(module) if not n.startswith("_")}
    assert public == DOCUMENTED[name] | PUBLIC_SUBMODULES[name]
    modules = {n for n in public if isinstance(getattr(module, n), types.ModuleType)}
    assert modules == PUBLIC_SUBMODULES[name]


# mrope.cuda's modules, lowest first: each imports only modules before it (mrope.cuda hands
# the torch modules what they need; they never import it).
CUDA_LAYERS = ("_arrays", "_capi", "_launch", "_torch_ops", "_torch_autograd", "cuda")


@pytest.mark.parametrize("name", CUDA_LAYERS)
def test_cuda_modules_import_downwards_only(name):
    path = os.path.join(os.path.dirname(mrope.__file__), name + ".py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "mrope":
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mrope."):
            imported.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            imported.update(a.name.split(".")[1] for a in node.names
                            if a.name.startswith("mrope."))
    above = set(CUDA_LAYERS[CUDA_LAYERS.index(name):])
    assert not imported & above, f"mrope.{name} imports {sorted(imported & above)}"
