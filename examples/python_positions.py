#!/usr/bin/env python3
"""Reads a processor-style JSON (the dict an HF processor returns, as lists) and prints the
M-RoPE positions mrope computes for it, the deltas, and the first decode positions.

    python3 examples/python_positions.py --model qwen2_5_vl examples/python_image_prompt.json

--model takes a preset name, a config.json or a checkpoint directory. The JSON's keys are
get_rope_index's: input_ids, attention_mask, image_grid_thw, video_grid_thw,
second_per_grid_ts (Qwen2.5-VL) and, for Omni, video_second_per_grid, audio_feature_lengths and
use_audio_in_video. A golden case file works too (its "inputs" are read).
"""
import argparse
import json

import numpy as np

import mrope

PROMPT_KEYS = ("input_ids", "image_grid_thw", "video_grid_thw", "attention_mask",
               "second_per_grid_ts", "video_second_per_grid", "audio_feature_lengths",
               "use_audio_in_video")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="preset, config.json or checkpoint dir")
    parser.add_argument("--decode-steps", type=int, default=3)
    parser.add_argument("prompt", help="processor-style JSON file")
    args = parser.parse_args()

    with open(args.prompt) as f:
        prompt = json.load(f)
    prompt = prompt.get("inputs", prompt)
    inputs = {k: prompt[k] for k in PROMPT_KEYS if prompt.get(k) is not None}

    model = mrope.Model.from_config(args.model)
    position_ids, deltas = model.get_rope_index(**inputs)
    decode = model.plan(**inputs).decode_positions(args.decode_steps)
    np.set_printoptions(linewidth=120)
    print(f"{model!r}: position_ids {position_ids.dtype} {list(position_ids.shape)}")
    for row in range(position_ids.shape[1]):
        print(f"row {row}  (delta {deltas[row, 0]}, next tokens at {decode[0, row].tolist()})")
        for axis, name in enumerate("thw"):
            print(f"  {name}: {position_ids[axis, row].tolist()}")


if __name__ == "__main__":
    main()
