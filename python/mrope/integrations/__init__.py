"""mrope inside other runtimes: transformers (mrope.integrations.transformers.enable()) and
plugins loaded by the runtimes' own plugin loaders (mrope.integrations.vllm,
mrope.integrations.sglang; README, "Use mrope in vLLM / SGLang / Ray").

Each runtime's module is imported on its own; this package imports none of them."""
