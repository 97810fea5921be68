"""Runtimes picking mrope up without code changes: plugins loaded by the runtimes' own plugin
loaders (mrope.integrations.vllm, mrope.integrations.sglang; README, "Use mrope in vLLM /
SGLang / Ray")."""
