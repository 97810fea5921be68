#!/usr/bin/env python3
"""M-RoPE positions for a training set on Ray Data: processor outputs (token ids, grids,
attention mask) mapped to positions, deltas and context-parallel slices by workers that each
hold one unpickled mrope.Model (sent once per worker, not per row).

    python3 examples/ray_positions.py --model qwen2_vl --prompts 2000 --workers 2 --cp-size 2

--model takes a preset name, a config.json or a checkpoint directory (the config travels in
the pickle: the workers need not see the file). The prompts here are synthetic (text, then one
image block of a random grid, then text); in a pipeline they are the processor's outputs.
"""
import argparse
import time

import numpy as np

import mrope


def prompt_positions(model, row, cp_size):
    """One processor output -> its positions [3, L], delta and, per context-parallel rank, the
    rank's positions and token indices (the row padded to a multiple of 2 * cp_size)."""
    tokens = np.asarray(row["input_ids"], dtype=np.int64)
    grids = {k: np.asarray(row[k], dtype=np.int64).reshape(-1, 3)
             for k in ("image_grid_thw", "video_grid_thw") if len(row.get(k, ())) > 0}
    mask = np.asarray(row["attention_mask"], dtype=np.int64)
    positions, deltas = model.get_rope_index(tokens[None], attention_mask=mask[None], **grids)
    padded = -len(tokens) % (2 * cp_size)
    plan = model.plan(np.pad(tokens, (0, padded))[None],
                      attention_mask=np.pad(mask, (0, padded))[None], **grids)
    out = {"id": row["id"], "positions": positions[:, 0], "delta": int(deltas[0, 0])}
    for rank in range(cp_size):
        rank_positions, token_index, _ = plan.cp_slice(cp_size, rank)
        out[f"cp{rank}_positions"] = rank_positions[:, 0]
        out[f"cp{rank}_token_index"] = token_index
    return out


class PromptPositions:
    """Ray Data's callable class: one per worker, holding the unpickled model."""

    def __init__(self, model, cp_size):
        self.model = model
        self.cp_size = cp_size

    def __call__(self, row):
        return prompt_positions(self.model, row, self.cp_size)


def map_positions(dataset, model, cp_size, workers):
    """The dataset of processor outputs mapped by `workers` actors of one CPU each."""
    return dataset.map(PromptPositions, fn_constructor_kwargs={"model": model,
                                                               "cp_size": cp_size},
                       concurrency=workers, num_cpus=1)


def synthetic_prompts(model, count, seed=0):
    """Rows of text, one image block (Qwen-VL ids of the preset) and text."""
    ids = {"qwen2_vl": (151652, 151655, 151653), "qwen2_5_vl": (151652, 151655, 151653),
           "qwen3_vl": (151652, 151655, 151653)}[model.family]
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(count):
        h, w = 2 * rng.integers(1, 9, size=2)
        block = [ids[0]] + [ids[1]] * int(h * w // 4) + [ids[2]]
        tokens = (rng.integers(0, 151000, rng.integers(1, 40)).tolist() + block +
                  rng.integers(0, 151000, rng.integers(1, 40)).tolist())
        rows.append({"id": i, "input_ids": tokens, "attention_mask": [1] * len(tokens),
                     "image_grid_thw": [[1, int(h), int(w)]], "video_grid_thw": []})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2_vl")
    parser.add_argument("--prompts", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cp-size", type=int, default=2)
    args = parser.parse_args()

    import ray
    model = mrope.Model.from_config(args.model)
    rows = synthetic_prompts(model, args.prompts)
    ray.init(num_cpus=args.workers, include_dashboard=False)
    start = time.perf_counter()
    results = map_positions(ray.data.from_items(rows), model, args.cp_size,
                            args.workers).take_all()
    ray_seconds = time.perf_counter() - start
    start = time.perf_counter()
    direct = [prompt_positions(model, row, args.cp_size) for row in rows]
    direct_seconds = time.perf_counter() - start
    by_id = {r["id"]: r for r in results}
    same = all(np.array_equal(by_id[d["id"]]["positions"], d["positions"]) and
               by_id[d["id"]]["delta"] == d["delta"] for d in direct)
    print(f"{len(results)} prompts on {args.workers} Ray workers: "
          f"{len(results) / ray_seconds / args.workers:.0f} prompts/s per core; "
          f"direct call: {len(direct) / direct_seconds:.0f} prompts/s; "
          f"{'same results' if same else 'RESULTS DIFFER'}")


if __name__ == "__main__":
    main()
