"""mrope inside HuggingFace transformers: ``enable()`` makes the installed transformers' M-RoPE
models take their position ids from mrope, with no other code change::

    import mrope.integrations.transformers as mrope_hf

    mrope_hf.enable()         # every covered model class; enable(model): that instance only
    model.generate(**inputs)  # prefill positions and the deltas decode adds come from mrope
    mrope_hf.disable()        # transformers' own methods again

What it replaces: ``get_rope_index`` of the classes in ``FAMILIES`` (the ``*Model`` of
Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5 and GLM-4.1V; the Qwen2.5-Omni thinker) by mrope's,
built from each model's own config (its token ids, merge size and time scales) under the
convention that reproduces the release exactly (``preset_for``). transformers' callers are
unchanged: forward() and generate() call it and derive the decode positions from its result as
before. The text rotary module (cos/sin) stays transformers' own.

``enable()`` never raises for what mrope does not cover (a family without an exact convention
for the release in mrope's release table, a model with no covered class, a config mrope
cannot read): one ``MropeTransformersWarning`` names it and that code stays transformers' own.
Importing this module imports no transformers; enable() does.
"""
import importlib as _importlib
import inspect as _inspect
import types as _types
import warnings as _warnings
import weakref as _weakref

__all__ = ["enable", "disable", "use", "preset_for", "FAMILIES", "MropeTransformersWarning"]

# mrope family: (module under transformers.models, the class whose get_rope_index computes the
# positions).
FAMILIES = {
    "qwen2_vl": ("qwen2_vl.modeling_qwen2_vl", "Qwen2VLModel"),
    "qwen2_5_vl": ("qwen2_5_vl.modeling_qwen2_5_vl", "Qwen2_5_VLModel"),
    "qwen3_vl": ("qwen3_vl.modeling_qwen3_vl", "Qwen3VLModel"),
    "qwen3_5": ("qwen3_5.modeling_qwen3_5", "Qwen3_5Model"),
    "glm4v": ("glm4v.modeling_glm4v", "Glm4vModel"),
    "qwen2_5_omni": ("qwen2_5_omni.modeling_qwen2_5_omni",
                     "Qwen2_5OmniThinkerForConditionalGeneration"),
}

# GLM-4.1V's bracketed video frames are <|image|> tokens: mrope refuses mm_token_type_ids' video
# runs there (python/tests/reference_differences.py), so it reads the token ids alone.
_NO_TOKEN_TYPES = ("glm4v",)

_NAME = "mrope.integrations.transformers"


class MropeTransformersWarning(UserWarning):
    """What enable() left to transformers, and why."""


def preset_for(family, convention="installed"):
    """(preset, overrides) of mrope reproducing get_rope_index of `family` in the transformers
    release `convention` names ("installed", or "transformers==X.Y.Z"), or (None, why not).

    The release is resolved by mrope's release table (``mrope.conventions()``,
    mrope/model/conventions.h): a release no convention of the family covers has none. Raises
    ValueError for another `convention` string.
    """
    from mrope import _mrope  # pylint: disable=import-outside-toplevel
    if not (convention == "installed" or
            isinstance(convention, str) and convention.startswith("transformers==")):
        raise ValueError(f"convention must be 'installed' or 'transformers==X.Y.Z', got "
                         f"{convention!r}")
    if family not in FAMILIES:
        return None, f"{family}: not a family {_NAME} covers ({', '.join(FAMILIES)})"
    try:
        return _mrope.convention_preset(family, convention), {}
    except ValueError as error:
        return None, f"{family}: {error}"


def _config_value(config, key):
    """`key` of an HF model config: at its top, in its vision or text config, or spelled
    *_token_index (the Omni thinker's ids). None when absent."""
    names = (key, key[:-len("_id")] + "_index") if key.endswith("_token_id") else (key,)
    for where in (config, getattr(config, "vision_config", None),
                  getattr(config, "text_config", None)):
        for name in names:
            value = getattr(where, name, None) if where is not None else None
            if value is not None:
                return value
    return None


def _mrope_model(family, config, convention):
    """The mrope.Model for a transformers model of `family` with `config`, under preset_for's
    convention (None where there is none); ValueError where mrope refuses the config's values."""
    import mrope  # pylint: disable=import-outside-toplevel
    from mrope import _mrope  # pylint: disable=import-outside-toplevel
    preset, overrides = preset_for(family, convention)
    if preset is None:
        return None
    for key in _mrope.preset_position_keys(preset):
        value = _config_value(config, key)
        if value is not None and key not in overrides:
            overrides[key] = value
    return mrope.Model.from_config(preset, overrides=overrides)


# What enable() replaced: {class: its own get_rope_index, None where inherited}, the patched
# instances, and each patched module's mrope.Model (False: mrope refused its config).
_CLASS_ORIGINALS = {}
_INSTANCES = _weakref.WeakSet()
_MODELS = _weakref.WeakKeyDictionary()


def _replacement(family, original, model_for):
    """get_rope_index of `family` computed by the mrope.Model `model_for(self)` gives;
    transformers' `original` where it gives none or no token ids came (inputs_embeds only)."""
    signature = _inspect.signature(original)
    var_keyword = [p.name for p in signature.parameters.values()
                   if p.kind is _inspect.Parameter.VAR_KEYWORD]

    def get_rope_index(self, *args, **kwargs):
        arguments = signature.bind(self, *args, **kwargs).arguments
        model = model_for(self)
        if model is None or arguments.get("input_ids") is None:
            return original(self, *args, **kwargs)
        accepted = set(model._impl.rope_index_arguments)  # pylint: disable=protected-access
        if family not in _NO_TOKEN_TYPES:
            accepted.add("mm_token_type_ids")
        given = {k: v for k, v in arguments.items() if k not in var_keyword}
        for name in var_keyword:  # transformers 5 passes generate()'s model kwargs here
            given.update(arguments.get(name, {}))
        named = {k: v for k, v in given.items() if k in accepted and v is not None}
        return model.get_rope_index(arguments["input_ids"], **named)

    get_rope_index.__doc__ = f"mrope's get_rope_index ({_NAME})."
    get_rope_index.mrope_original = original
    return get_rope_index


def _cached_model(family, convention):
    """model_for of enable(): each module's mrope.Model from its config, made on first use;
    None (after one warning) where mrope refuses the config."""
    def model_for(module):
        model = _MODELS.get(module)
        if model is None:
            try:
                model = _mrope_model(family, module.config, convention)
            except ValueError as error:
                _warn(f"{type(module).__name__} left to transformers: {error}")
            model = _MODELS[module] = model or False
        return model or None
    return model_for


def _patch_instance(module, family, model_for):
    if "get_rope_index" not in module.__dict__:
        original = type(module).get_rope_index
        original = getattr(original, "mrope_original", original)
        module.get_rope_index = _types.MethodType(_replacement(family, original, model_for),
                                                  module)
        _INSTANCES.add(module)


def _classes():
    """{family: the installed transformers' class, or None where it has no such model}."""
    classes = {}
    for family, (module, name) in FAMILIES.items():
        try:
            classes[family] = getattr(
                _importlib.import_module("transformers.models." + module), name)
        except (ImportError, AttributeError):
            classes[family] = None
    return classes


def _warn(message):
    _warnings.warn(f"{_NAME}: {message}", MropeTransformersWarning, stacklevel=3)


def use(module, model):
    """Makes `module` (an instance of a class in FAMILIES, e.g. ``hf_model.model``) compute its
    positions with `model`, an mrope.Model of any preset and overrides. disable(module) undoes
    it. Raises ValueError when `module`'s class is not one of FAMILIES' or `model` is of
    another family."""
    classes = {cls: family for family, cls in _classes().items() if cls is not None}
    family = classes.get(type(module))
    if family is None:
        raise ValueError(f"{type(module).__name__} is not a model class mrope covers "
                         f"({', '.join(cls.__name__ for cls in classes)})")
    if model.family != family:
        raise ValueError(f"{type(module).__name__} is {family}; the mrope.Model is "
                         f"{model.family}")
    _patch_instance(module, family, lambda _: model)


def enable(model=None, convention="installed"):
    """Makes transformers' M-RoPE models take their positions from mrope.

    Args:
        model: a transformers model (its covered submodules are patched, this instance only),
            or None: the covered classes of the installed transformers (every instance, made
            before or after).
        convention: "installed" (the installed transformers' release) or "transformers==X.Y.Z".

    Returns:
        The families replaced (a tuple). What was left to transformers is named in one
        MropeTransformersWarning; nothing raises for it.
    """
    try:
        import transformers  # pylint: disable=import-outside-toplevel,unused-import
    except ImportError as error:
        _warn(f"nothing replaced: {error}")
        return ()
    replaced, skipped, found = [], [], False
    classes = _classes()
    if model is None:
        for family, cls in classes.items():
            if cls is None:  # not in the installed transformers: nothing of it can run here
                continue
            preset, why = preset_for(family, convention)
            if preset is None:
                skipped.append(why)
                continue
            if cls not in _CLASS_ORIGINALS:
                _CLASS_ORIGINALS[cls] = cls.__dict__.get("get_rope_index")
                cls.get_rope_index = _replacement(family, cls.get_rope_index,
                                                  _cached_model(family, convention))
            replaced.append(family)
    else:
        by_class = {cls: family for family, cls in classes.items() if cls is not None}
        for module in model.modules():
            family = by_class.get(type(module))
            if family is None:
                continue
            found = True
            preset, why = preset_for(family, convention)
            if preset is None:
                skipped.append(why)
                continue
            model_for = _cached_model(family, convention)
            if model_for(module) is not None:  # made now: a refused config warns here
                _patch_instance(module, family, model_for)
                replaced.append(family)
        if not found:
            skipped.append(f"{type(model).__name__} holds no model class mrope covers "
                           f"({', '.join(FAMILIES)})")
    if skipped:
        _warn("left to transformers: " + "; ".join(dict.fromkeys(skipped)))
    return tuple(dict.fromkeys(replaced))


def disable(model=None):
    """Undoes enable(model) or use(model) (model None: enable() of the classes)."""
    if model is None:
        for cls, original in _CLASS_ORIGINALS.items():
            if original is None:
                del cls.get_rope_index
            else:
                cls.get_rope_index = original
        _CLASS_ORIGINALS.clear()
        _MODELS.clear()  # the instances enable(model) patched make theirs again
        return
    for module in model.modules():
        if module in _INSTANCES:
            del module.get_rope_index
            _INSTANCES.discard(module)
            _MODELS.pop(module, None)
