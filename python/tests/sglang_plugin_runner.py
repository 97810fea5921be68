"""mrope's SGLang plugin inside SGLang (test_reference_sglang_plugin.py starts this in a process
with the pinned SGLang and a dist-info declaring the plugin's entry point on sys.path, as the
wheel does): SGLang's own loader loads it and applies its hooks, then SGLang's
MRotaryEmbedding.get_rope_index (hooked: mrope's) and SGLang's own (the hook's original) run on
the same requests.

stdin: pickle {"families": {model_type: (config, [(input_ids, image grids, video grids,
seconds per grid or None)])}}.
stdout: pickle {"plugins", "hooked", "positions": {model_type: [(ours, SGLang's)]}, "log"}.
"""
import io
import logging
import pickle
import sys

import torch

log = io.StringIO()
logging.getLogger("mrope").addHandler(logging.StreamHandler(log))
logging.getLogger("mrope").setLevel(logging.INFO)


def main():
    request = pickle.load(sys.stdin.buffer)
    from importlib.metadata import entry_points

    from sglang.srt import plugins
    from sglang.srt.layers.rotary_embedding.mrope import MRotaryEmbedding
    plugins.load_plugins()
    hooked = MRotaryEmbedding.__dict__["get_rope_index"].__func__
    sglangs = getattr(hooked, "__wrapped__", None)
    response = {"plugins": sorted(f"{e.name} = {e.value}"
                                  for e in entry_points(group=plugins.GENERAL_PLUGINS_GROUP)),
                "hooked": sorted(plugins.HookRegistry._patched), "positions": {}}
    for model_type, (config, requests) in request["families"].items():
        pairs = []
        for tokens, images, videos, seconds in requests:
            args = dict(spatial_merge_size=config["spatial_merge_size"],
                        image_token_id=config["image_token_id"],
                        video_token_id=config["video_token_id"],
                        vision_start_token_id=config["vision_start_token_id"],
                        model_type=model_type,
                        tokens_per_second=config.get("tokens_per_second"),
                        input_ids=torch.tensor([tokens]),
                        image_grid_thw=torch.tensor(images) if images else None,
                        video_grid_thw=torch.tensor(videos) if videos else None,
                        second_per_grid_ts=torch.tensor(seconds) if seconds else None)
            ours = MRotaryEmbedding.get_rope_index(**args)
            theirs = sglangs(**args)
            pairs.append(tuple((p.numpy(), d.numpy()) for p, d in (ours, theirs)))
        response["positions"][model_type] = pairs
    response["log"] = log.getvalue()
    pickle.dump(response, sys.stdout.buffer)


if __name__ == "__main__":
    main()
