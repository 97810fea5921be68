"""mrope: M-RoPE position ids for vision-language models, from C++.

Bit-exact with HuggingFace transformers ``get_rope_index`` (v4.57.6 for the v4 families,
v5.2.0 for those new in 5.x, and the ``<family>_hf_v5_2`` / ``<family>_hf_v5`` presets for
v5.2.0 and v5.15.0) and vLLM's per-request convention (``qwen2_5_vl_vllm``), for every model
family mrope supports::

    import mrope

    model = mrope.Model.from_config("qwen2_5_vl")  # a preset, a config.json or a checkpoint dir
    position_ids, deltas = model.get_rope_index(input_ids, image_grid_thw=grids,
                                                attention_mask=mask)

``Model.from_config("qwen2_5_vl", convention="transformers==5.23.0")`` (or ``"vllm==0.33.0"``,
or ``"installed"``) picks the convention reproducing that release; ``mrope.conventions()`` lists
every convention per family with its reference, release range and verification.

``mrope.presets()`` lists the preset names ``Model.from_config`` accepts (every family and its
variants, such as ``"qwen2_5_vl_hf"``, ``"qwen2_5_vl_vllm"`` and ``"qwen2_vl_hf_v5_2"``).

Inputs are numpy arrays, lists, or torch tensors; outputs are numpy arrays that own mrope's
buffers (no copy), or torch tensors when torch tensors came in. ``input_ids`` and
``attention_mask`` are read in place when they are C-contiguous int64 (CPU torch tensors
included); other dtypes and layouts are converted once per call. Bad input raises ValueError
with mrope's message. The GIL is released while computing, and a Model is immutable, so one
model serves any number of threads; inputs must not be modified while a call reads them.

``mrope.cuda`` applies mrope's CUDA kernels to torch / CuPy / JAX tensors through the C ABI
(ctypes); it also works where the compiled extension does not load (another CPython).
"""
try:
    from mrope._model import Model
    from mrope._model import conventions
    from mrope._mrope import Plan
    from mrope._mrope import presets
except ImportError as _error:  # e.g. a CPython other than the extension's: mrope.cuda works
    _EXTENSION_ERROR = _error

    def __getattr__(name):
        if name in ("Model", "Plan", "conventions", "presets"):
            raise ImportError(f"mrope.{name} needs the compiled extension mrope._mrope, which "
                              f"did not load: {_EXTENSION_ERROR}")
        raise AttributeError(f"module 'mrope' has no attribute '{name}'")

__all__ = ["Model", "Plan", "conventions", "presets"]
