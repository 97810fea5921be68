"""mrope in vLLM, with no code change: the wheel declares the entry point

    [vllm.general_plugins]
    mrope = mrope.integrations.vllm:register

which vLLM's own loader (vllm.plugins.load_general_plugins) calls in every process. ``register``
applies the parts named in ``MROPE_VLLM`` (comma-separated; default
``positions,rotary,fused``; ``none`` applies nothing):

- ``positions``: ``get_mrope_input_positions`` of the vLLM model classes in ``POSITION_CLASSES``
  returns mrope's positions under the ``vllm`` convention (the class's config gives the token
  ids, merge size and time scale). A request mrope refuses goes to vLLM's own method (logged
  once per class).
- ``rotary``: ``MRotaryEmbedding`` is replaced (``CustomOp.register_oot``) by a subclass whose
  CUDA forward is mrope's kernel (``torch.ops.mrope.apply_mrope_``: no cos/sin gather in torch)
  and whose CPU forward rotates by mrope's cos/sin. A layer mrope does not cover (YaRN-scaled,
  GPT-J pairs with interleaved sections) keeps vLLM's forward (logged).
- ``fused``: on a CUDA platform, the Qwen3-VL and Qwen3.5 architectures are registered over
  vLLM's (``ModelRegistry``) with attention layers whose QK-RMSNorm + M-RoPE is one
  ``mrope.cuda.fused_mrope_`` launch (mrope/integrations/_vllm_fused.py). On other platforms it
  is not applied (logged).

Whatever cannot apply (vLLM without a class, an unknown part) is logged in one line naming it
and vLLM's code stays in place; ``register`` never raises. It is idempotent.
"""
import functools
import importlib
import logging

from mrope.integrations import _common

logger = _common.logger
PARTS = ("positions", "rotary", "fused")
DEFAULT = "positions,rotary,fused"

# vLLM model class -> the mrope preset whose rules it runs and the config keys it reads. The
# Qwen3-VL MoE and Qwen3.5 classes inherit Qwen3-VL's method: Qwen3-VL's vLLM rules with their
# own ids.
_QWEN_IDS = ("image_token_id", "video_token_id", "vision_start_token_id",
             "vision_end_token_id", "spatial_merge_size")
POSITION_CLASSES = {
    "qwen2_vl.Qwen2VLForConditionalGeneration": ("qwen2_vl_vllm", _QWEN_IDS),
    "qwen2_5_vl.Qwen2_5_VLForConditionalGeneration": (
        "qwen2_5_vl_vllm", _QWEN_IDS + ("tokens_per_second",)),
    "qwen3_vl.Qwen3VLForConditionalGeneration": ("qwen3_vl_vllm", _QWEN_IDS),
    "qwen3_vl_moe.Qwen3VLMoeForConditionalGeneration": ("qwen3_vl_vllm", _QWEN_IDS),
    "qwen3_5.Qwen3_5ForConditionalGeneration": ("qwen3_vl_vllm", _QWEN_IDS),
    "qwen3_5.Qwen3_5MoeForConditionalGeneration": ("qwen3_vl_vllm", _QWEN_IDS),
}
_MODELS = "vllm.model_executor.models."
# The architectures whose attention the fused part overrides.
FUSED_ARCHITECTURES = ("Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration",
                       "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration")

_applied = set()


def register():
    """vLLM's general plugin: applies the parts of $MROPE_VLLM once per process."""
    for part in _common.parts("MROPE_VLLM", PARTS, DEFAULT):
        if part in _applied:
            continue
        _applied.add(part)
        try:
            {"positions": _register_positions, "rotary": _register_rotary,
             "fused": _register_fused}[part]()
        except Exception as e:  # never break vLLM's start
            logger.warning("mrope: vLLM plugin part %r skipped: %s: %s", part,
                           type(e).__name__, e)


def _class_name(cls):
    """"module.Class" of a vLLM model class (the fused part's subclasses: their base's)."""
    if cls.__module__ == "mrope.integrations._vllm_fused":
        cls = cls.__mro__[1]
    return cls.__module__[len(_MODELS):] + "." + cls.__qualname__


def _register_positions():
    patched, skipped = [], []
    for name in POSITION_CLASSES:
        module, _, cls_name = name.rpartition(".")
        try:
            cls = getattr(importlib.import_module(_MODELS + module), cls_name)
        except (ImportError, AttributeError) as e:
            skipped.append(f"{name} ({type(e).__name__}: {e})")
            continue
        owner = next(k for k in cls.__mro__ if "get_mrope_input_positions" in k.__dict__)
        if not getattr(owner.__dict__["get_mrope_input_positions"], "_mrope", False):
            owner.get_mrope_input_positions = _positions_method(
                owner.__dict__["get_mrope_input_positions"])
        patched.append(name)
    if skipped:
        logger.warning("mrope: vLLM positions skipped for %s", "; ".join(skipped))
    logger.info("mrope: vLLM positions from mrope for %s", ", ".join(patched))


def _positions_method(original):
    """get_mrope_input_positions of the classes in POSITION_CLASSES (others: `original`)."""

    @functools.wraps(original)
    def get_mrope_input_positions(self, input_tokens, mm_features):
        covered = POSITION_CLASSES.get(_class_name(type(self)))
        if covered is None:
            return original(self, input_tokens, mm_features)
        import torch
        try:
            model = _common.positions_model(covered[0], self.config, covered[1])
            positions, delta = model.get_mrope_input_positions(list(input_tokens),
                                                               list(mm_features))
        except ValueError as e:
            _log_fallback(type(self).__qualname__, str(e))
            return original(self, input_tokens, mm_features)
        return torch.from_numpy(positions), int(delta)

    get_mrope_input_positions._mrope = True
    return get_mrope_input_positions


@functools.lru_cache(maxsize=None)
def _log_fallback(cls_name, error):
    logger.warning("mrope: %s: a request went to vLLM's positions: %s", cls_name, error)


def _register_rotary():
    from vllm.model_executor.custom_op import op_registry_oot
    from vllm.model_executor.layers.rotary_embedding.mrope import MRotaryEmbedding
    if "MRotaryEmbedding" in op_registry_oot:
        found = op_registry_oot["MRotaryEmbedding"]
        if found.__module__ != __name__:
            logger.warning("mrope: vLLM rotary skipped: MRotaryEmbedding is already replaced "
                           "by %s.%s", found.__module__, found.__qualname__)
        return
    MRotaryEmbedding.register_oot(_rotary_class(MRotaryEmbedding))
    logger.info("mrope: vLLM MRotaryEmbedding is mrope's")


def _rotary_class(base):
    class MropeMRotaryEmbedding(base):
        """vLLM's MRotaryEmbedding with mrope's forward (CUDA: mrope's kernel; CPU: mrope's
        cos/sin); layers mrope does not cover keep vLLM's."""

        def __init__(self, head_size, rotary_dim, max_position_embeddings, base_, is_neox_style,
                     dtype, mrope_section=None, mrope_interleaved=False, **kwargs):
            import torch
            super().__init__(head_size, rotary_dim, max_position_embeddings, base_,
                             is_neox_style, dtype, mrope_section, mrope_interleaved, **kwargs)
            self.mrope_model, why = _common.rotary_model(
                head_size, rotary_dim, base_, is_neox_style, mrope_section,
                mrope_interleaved,
                "YaRN-scaled M-RoPE" if kwargs.get("scaling_factor") is not None else None)
            if why is not None:
                _log_layer_skipped(why)
            self.mrope_key = None
            if self.mrope_model is not None:
                import mrope.cuda
                self.mrope_key = mrope.cuda.model_key(self.mrope_model)
            # The kernel's device error flag: a buffer, so it follows the layer's device.
            self.register_buffer("mrope_error_flag", torch.zeros(1, dtype=torch.int32),
                                 persistent=False)

        def forward_cuda(self, positions, query, key=None, offsets=None):
            if self.mrope_key is None or key is None or offsets is not None:
                return super().forward_cuda(positions, query, key, offsets)
            import torch
            torch.ops.mrope.apply_mrope_(query, key, positions, self.mrope_key, 1,
                                         _common.SINCOS_MATH, None, self.mrope_error_flag)
            return query, key

        def forward_cpu(self, positions, query, key=None, offsets=None):
            if self.mrope_model is None or key is None or offsets is not None:
                return super().forward_cpu(positions, query, key, offsets)
            for x in (query, key):
                _common.rotate_on_cpu(self.mrope_model, positions, x, self.head_size,
                                      self.rotary_dim, self.is_neox_style)
            return query, key

    MropeMRotaryEmbedding.__module__ = __name__
    return MropeMRotaryEmbedding


@functools.lru_cache(maxsize=None)
def _log_layer_skipped(why):
    logger.warning("mrope: a vLLM MRotaryEmbedding keeps vLLM's forward: %s", why)


def _register_fused():
    from vllm.platforms import current_platform
    if not current_platform.is_cuda():
        logger.warning("mrope: vLLM fused attention not applied: the platform is %s, not CUDA",
                       type(current_platform).__name__)
        return
    from vllm import ModelRegistry
    for arch in FUSED_ARCHITECTURES:
        ModelRegistry.register_model(arch, f"mrope.integrations._vllm_fused:{arch}")
    logger.info("mrope: vLLM fused QK-norm + M-RoPE for %s", ", ".join(FUSED_ARCHITECTURES))
