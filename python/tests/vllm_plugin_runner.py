"""mrope's vLLM plugin inside vLLM (test_reference_vllm_plugin.py starts this in a process of
the pinned vLLM, with a dist-info declaring the plugin's entry point on sys.path, as the wheel
does):
vLLM's own loader loads it, then the layer vLLM instantiates, the positions of each covered
model class and vLLM's M-RoPE kernel test cases are run.

stdin: pickle {"positions": {class: (config, [requests])}, "rope_cases": [case dicts]}.
stdout: pickle {"plugins", "applied", "layer", "positions": {class: [(ours, vLLM's)]},
"rope": [(layer module, mrope covers it, assert_close's mismatches)], "log"}.
"""
import importlib
import io
import logging
import pickle
import sys

import numpy as np
import torch

import reference_runner_vllm

log = io.StringIO()
logging.getLogger("mrope").addHandler(logging.StreamHandler(log))
logging.getLogger("mrope").setLevel(logging.INFO)


def load_plugins():
    """vLLM's own general-plugin loader; the entry points it saw."""
    from importlib.metadata import entry_points

    from vllm import plugins
    plugins.load_general_plugins()
    return sorted(f"{e.name} = {e.value}" for e in entry_points(group=plugins.DEFAULT_PLUGINS_GROUP))


def instance(name, config):
    """A `name` model object holding only `config` (the positions read nothing else)."""
    module, _, cls_name = name.rpartition(".")
    cls = getattr(importlib.import_module("vllm.model_executor.models." + module), cls_name)
    this = cls.__new__(cls)
    object.__setattr__(this, "config", reference_runner_vllm._config(config))
    return this


def positions(name, config, requests):
    this = instance(name, config)
    vllms = type(this).get_mrope_input_positions.__wrapped__
    results = []
    media_ids = [config["image_token_id"], config["video_token_id"]]
    for tokens, features in requests:
        features = [reference_runner_vllm._feature(np.array(tokens), media_ids, False, *f)
                    for f in features]
        ours = this.get_mrope_input_positions(list(tokens), features)
        theirs = vllms(this, list(tokens), features)
        results.append(((ours[0].numpy(), ours[1]), (theirs[0].numpy(), theirs[1])))
    return results


def rope_case(case):
    """vLLM's tests/kernels/core/test_mrope.py case: get_rope of the checkpoint's text config,
    seeded positions, q and k; mrope's forward (the dispatched CPU one) and vLLM's native."""
    from vllm.model_executor.layers.rotary_embedding import get_rope
    layer = get_rope(head_size=case["head_dim"], max_position=case["max_position"],
                     is_neox_style=True, rope_parameters=case["rope_parameters"],
                     dtype=case["dtype"])
    torch.manual_seed(42)  # vLLM's set_random_seed(42) on the CPU (it also seeds the platform)
    tokens = case["num_tokens"]
    pos = torch.randint(0, case["max_position"] // 4, (3, tokens))
    query = torch.randn(tokens, case["num_heads"] * case["head_dim"], dtype=case["dtype"])
    key = torch.randn(tokens, case["num_kv_heads"] * case["head_dim"], dtype=case["dtype"])
    q_native, k_native = layer.forward_native(pos, query.clone(), key.clone())
    q_ours, k_ours = layer.forward_cpu(pos, query.clone(), key.clone())
    mismatches = []
    for ours, native in ((q_ours, q_native), (k_ours, k_native)):
        try:
            torch.testing.assert_close(ours, native, atol=case["atol"], rtol=case["rtol"])
        except AssertionError as e:
            mismatches.append(str(e))
    return type(layer).__module__, layer.mrope_model is not None, mismatches


def main():
    request = pickle.load(sys.stdin.buffer)
    from vllm.config import DeviceConfig, VllmConfig, set_current_vllm_config
    response = {"plugins": load_plugins()}
    import mrope.integrations.vllm as plugin
    response["applied"] = sorted(plugin._applied)
    with set_current_vllm_config(VllmConfig(device_config=DeviceConfig(device="cpu"))):
        response["positions"] = {name: positions(name, *value)
                                 for name, value in request["positions"].items()}
        response["rope"] = [rope_case(c) for c in request["rope_cases"]]
    plugin.register()  # again: idempotent
    response["log"] = log.getvalue()
    pickle.dump(response, sys.stdout.buffer)


if __name__ == "__main__":
    main()
