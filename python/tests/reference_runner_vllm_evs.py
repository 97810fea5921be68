"""Drives an installed vLLM's EVS (efficient video sampling) position recomputation through
chunked prefill as Model Runner V2 does, in the process the test starts for it (its directory
first on sys.path): per request, vLLM's own code in the order the runner calls it:

- RopeState.init_prefill_positions (vllm/v1/worker/gpu/mm/rope.py): the model's
  get_mrope_input_positions(prompt, mm_features) on the pruned prompt, kept as int32;
- the encoder outputs as embed_multimodal leaves them with pruning on: random embeddings of the
  item's grid in the embedding dtype through the model's own _postprocess_video_embeds_evs /
  _postprocess_image_embeds_evs (EVS's retention mask, the position channels appended by
  torch.cat in that dtype; Qwen3-VL's frames laid out by get_video_repl);
- per prefill step [start, end): EncoderRunner.gather_mm_embeddings (the window's slice of each
  item's output) and MultiModalPruner.recompute (vllm/v1/worker/gpu/model_states/
  mm_pruning.py: the model's recompute_mrope_positions with the request's stored positions and
  num_computed_tokens = start, written back); the step's positions are the stored rows
  [start, end) after it, as _prepare_rope_positions_kernel reads them.

Stand-ins, holding only what that code reads: the model instance (_Self of its class: config,
visual.spatial_merge_size, the pruning settings, a tokenizer giving each timestamp string the
ids the prompt has, a language model embedding every token as zeros), the encoder cache, the
input batch of the one request, and RopeState (an int32 tensor; its UVA buffers need a GPU).

stdin: pickle {"families": {family: (config, [request])}}, a request being a dict: tokens (the
pruned prompt), features [(modality, offset, length, (t, h, w), seconds per grid or None,
timestamps or None)], stamps {"<x.y seconds>": [ids]}, rate, dtype ("bfloat16" or "float32"),
seed (of the embeddings) and schedules (lists of (start, end) steps covering the prompt).
stdout: pickle {"version", "results": {family: [{"masks": [...], "runs": [per schedule
{"windows": [[3, end - start] int64], "delta"} or {"error", "step"} (step -1: the initial
positions)]}]}, "sources": {family: "file:line" of recompute_mrope_positions}}.
"""
import importlib
import types

import numpy as np
import torch
from vllm.multimodal.inputs import PlaceholderRange
from vllm.multimodal.video_prune import evs
from vllm.utils import torch_utils
from vllm.v1.worker.gpu.mm import encoder_runner
from vllm.v1.worker.gpu.model_states.mm_pruning import MultiModalPruner

import stand_in
from reference_runner_vllm import _config, serve, source_line

# No GPU here: pinned host buffers need its driver, and pinning changes no value.
torch_utils.PIN_MEMORY = encoder_runner.PIN_MEMORY = False

MODEL_CLASSES = {
    "qwen2_5_vl": "qwen2_5_vl.Qwen2_5_VLForConditionalGeneration",
    "qwen3_vl": "qwen3_vl.Qwen3VLForConditionalGeneration",
    "qwen3_5": "qwen3_5.Qwen3_5ForConditionalGeneration",
}
HIDDEN = 8  # the stand-in embeddings' width; the position channels come after it
REQUEST = "request"


def _stand_in(cls, **attributes):
    this = stand_in.Self(cls, attributes.pop("config", None))
    this.__dict__.update(attributes)
    return this


class _Tokenizer:
    """The prompt's ids of each timestamp string (get_video_repl encodes f"<{t:.1f} seconds>")."""

    def __init__(self, stamps):
        self.stamps = stamps

    def encode(self, text, add_special_tokens=True):
        assert not add_special_tokens
        return list(self.stamps[text])


class _VideoInput(dict):
    """The model's video input: fields by key, Qwen3-VL's timestamps by attribute."""
    timestamps = None


class _RopeState:
    """RopeState's rows of the one request: int32 (prefill_positions), read back .long() by the
    pruner; update_prefill_positions overwrites the first positions.shape[1] columns."""

    def __init__(self, positions, delta):
        self.rows = positions.to(torch.int32)
        self.delta = delta

    def read_prefill_positions(self, req_idx, length):
        return self.rows[:, :length]

    def update_prefill_positions(self, req_idx, positions, delta):
        self.rows[:, :positions.shape[1]].copy_(positions)
        self.delta = delta


def _model(cls, config, request):
    dtype = getattr(torch, request["dtype"])
    return _stand_in(
        cls, config=_config(config),
        visual=types.SimpleNamespace(spatial_merge_size=config["spatial_merge_size"]),
        video_pruning_rate=request["rate"], video_pruning_method="evs",
        is_multimodal_pruning_enabled=True, use_deepstack=False,
        _tokenizer=_Tokenizer(request["stamps"]),
        get_language_model=lambda: types.SimpleNamespace(
            embed_input_ids=lambda ids: torch.zeros(len(ids), HIDDEN, dtype=dtype)))


def _features(request):
    out = []
    for i, (modality, offset, length, grid, seconds, _) in enumerate(request["features"]):
        data = {f"{modality}_grid_thw": types.SimpleNamespace(data=torch.tensor(grid))}
        if seconds is not None:
            data["second_per_grid_ts"] = types.SimpleNamespace(data=torch.tensor(seconds))
        # is_embed None: vLLM's processors give these replacements as plain token lists
        # (Qwen3-VL's pruned video from_seq), every placeholder token an embedding row.
        out.append(types.SimpleNamespace(
            modality=modality, identifier=f"item{i}", data=data,
            mm_position=PlaceholderRange(offset=offset, length=length)))
    return out


def _encoder_outputs(cls, model, request, merge):
    """(outputs by identifier, keep masks of the videos in prompt order)."""
    dtype = getattr(torch, request["dtype"])
    generator = torch.Generator().manual_seed(request["seed"])
    outputs, masks = {}, []
    for i, (modality, _, _, grid, seconds, timestamps) in enumerate(request["features"]):
        rows = grid[0] * (grid[1] // merge) * (grid[2] // merge)
        emb = torch.randn(rows, HIDDEN, generator=generator).to(dtype)
        grid_thw = torch.tensor([grid])
        if modality == "image":
            out = cls._postprocess_image_embeds_evs(model, (emb,), {"image_grid_thw": grid_thw})
        else:
            video = _VideoInput(video_grid_thw=grid_thw)
            if seconds is not None:
                video["second_per_grid_ts"] = torch.tensor([seconds])
            video.timestamps = [timestamps]
            out = cls._postprocess_video_embeds_evs(model, (emb,), video)
            masks.append(evs.compute_retention_mask(emb, grid, merge, request["rate"])
                         .long().tolist())
        outputs[f"item{i}"] = out[0]
    return outputs, masks


def _drive(cls, model, request, features, outputs, schedule):
    tokens = list(request["tokens"])
    n = len(tokens)
    try:
        positions, delta = cls.get_mrope_input_positions(model, tokens, features)
    except Exception as e:  # the reference's own failure is a result too
        return {"error": f"{type(e).__name__}: {e}", "step": -1}
    rope = _RopeState(positions, delta)
    cache = types.SimpleNamespace(mm_features={REQUEST: features}, encoder_outputs=outputs)
    runner = _stand_in(encoder_runner.EncoderRunner, is_realtime=False, encoder_cache=cache)
    pruner = _stand_in(MultiModalPruner, model=model, rope_state=rope, encoder_cache=cache)
    states = types.SimpleNamespace(all_token_ids=types.SimpleNamespace(
        gpu=torch.tensor([tokens])))
    windows = []
    for step, (start, end) in enumerate(schedule):
        scheduled = np.array([end - start])
        try:
            embeds, _ = encoder_runner.EncoderRunner.gather_mm_embeddings(
                runner, [REQUEST], end - start, scheduled, np.array([0, end - start]),
                np.array([n]), np.array([start]))
            if embeds:  # DefaultModelState.prepare_inputs_embeds
                batch = types.SimpleNamespace(
                    req_ids=[REQUEST], idx_mapping_np=np.array([0]),
                    prefill_len_np=np.array([n]), num_computed_prefill_tokens_np=np.array([start]),
                    num_scheduled_tokens=scheduled)
                MultiModalPruner.recompute(pruner, embeds, batch, states)
        except Exception as e:
            return {"error": f"{type(e).__name__}: {e}", "step": step}
        windows.append(rope.rows[:, start:end].long().numpy().copy())
    return {"windows": windows, "delta": int(rope.delta)}


def run(family, config, requests):
    module, _, name = MODEL_CLASSES[family].rpartition(".")
    cls = getattr(importlib.import_module("vllm.model_executor.models." + module), name)
    results = []
    for request in requests:
        model = _model(cls, config, request)
        features = _features(request)
        outputs, masks = _encoder_outputs(cls, model, request, config["spatial_merge_size"])
        rows = [outputs[f.identifier].shape[0] for f in features]
        assert rows == [f.mm_position.length for f in features], (
            "encoder rows differ from the placeholders", rows, request["features"])
        results.append({"masks": masks, "runs": [
            _drive(cls, model, request, features, outputs, s) for s in request["schedules"]]})
    return results, source_line(evs.recompute_mrope_positions)


if __name__ == "__main__":
    serve(run)
