"""Runs an installed transformers' own text rotary modules and apply functions, in the process
the test starts for that transformers (its directory first on sys.path).

stdin: pickle {"cases": [{"family", "rope" (head_dim, rope_theta, mrope_section,
partial_rotary_factor or None, max_position_embeddings, scaling: {} or rope_scaling's keys),
"position_ids" [3, B, T] int64, "q" [B, Hq, T, D], "k" [B, Hk, T, D] float32}]}.
stdout: pickle {"version", "results": [{"cos", "sin", "q", "k": the module's forward(x,
position_ids) and the family's apply on them; the same under "exact" with torch's float32
cos/sin evaluated in double and rounded (everything else the module's own code); "apply": the
apply function's name} or {"error"}]}.

The module is built from a small text config of the family (no weights, no downloads).
"""
import contextlib
import importlib
import pickle
import sys

import torch
import transformers

# family -> (modeling module, text config class, rotary class). GLM-4.6V's text model is
# GLM-4.1V's, Cosmos3-Omni's Qwen3-VL's.
MODULES = {
    "qwen2_vl": ("qwen2_vl", "Qwen2VLTextConfig", "Qwen2VLRotaryEmbedding"),
    "qwen2_5_vl": ("qwen2_5_vl", "Qwen2_5_VLTextConfig", "Qwen2_5_VLRotaryEmbedding"),
    "qwen3_vl": ("qwen3_vl", "Qwen3VLTextConfig", "Qwen3VLTextRotaryEmbedding"),
    "qwen2_5_omni": ("qwen2_5_omni", "Qwen2_5OmniTextConfig", "Qwen2_5OmniRotaryEmbedding"),
    "qwen3_omni": ("qwen3_omni_moe", "Qwen3OmniMoeTextConfig",
                   "Qwen3OmniMoeThinkerTextRotaryEmbedding"),
    "glm4v": ("glm4v", "Glm4vTextConfig", "Glm4vTextRotaryEmbedding"),
    "glm4v_moe": ("glm4v_moe", "Glm4vMoeTextConfig", "Glm4vMoeTextRotaryEmbedding"),
    "qwen3_5": ("qwen3_5", "Qwen3_5TextConfig", "Qwen3_5TextRotaryEmbedding"),
    "qwen3_5_moe": ("qwen3_5_moe", "Qwen3_5MoeTextConfig", "Qwen3_5MoeTextRotaryEmbedding"),
    "glm46v": ("glm4v", "Glm4vTextConfig", "Glm4vTextRotaryEmbedding"),
    "glm_ocr": ("glm_ocr", "GlmOcrTextConfig", "GlmOcrTextRotaryEmbedding"),
    "paddleocr_vl": ("paddleocr_vl", "PaddleOCRTextConfig", "PaddleOCRRotaryEmbedding"),
    "ernie4_5_vl_moe": ("ernie4_5_vl_moe", "Ernie4_5_VLMoeTextConfig",
                        "Ernie4_5_VLMoeTextRotaryEmbedding"),
    "glm_image": ("glm_image", "GlmImageTextConfig", "GlmImageTextRotaryEmbedding"),
    "qwen4_exp": ("qwen4_exp", "Qwen4ExpTextConfig", "Qwen4ExpTextRotaryEmbedding"),
    "cosmos3_omni": ("qwen3_vl", "Qwen3VLTextConfig", "Qwen3VLTextRotaryEmbedding"),
    "cosmos3_edge": ("cosmos3_edge", "Cosmos3EdgeTextConfig", "Cosmos3EdgeTextRotaryEmbedding"),
    "cohere_compass": ("cohere_compass", "CohereCompassTextConfig",
                       "CohereCompassRotaryEmbedding"),
    "hunyuan_vl": ("hunyuan_vl", "HunYuanVLTextConfig", "HunYuanVLRotaryEmbedding"),
}
# Families whose rotary is per layer type: the rotary type the case runs (forward's layer_type),
# beside a NoPE full_attention layer (rope_parameters null).
LAYER_TYPE = {"cohere_compass": "sliding_attention"}

V5 = int(transformers.__version__.split(".")[0]) >= 5


def _config(cls, rope, layer_type=None):
    """A small text config: 2 heads of head_dim, the rope values and scaling given (with
    `layer_type`: for that layer type, beside a NoPE full_attention one)."""
    kwargs = dict(hidden_size=2 * rope["head_dim"], num_attention_heads=2, num_key_value_heads=1,
                  head_dim=rope["head_dim"],
                  max_position_embeddings=rope["max_position_embeddings"])
    scaling = dict(rope["scaling"])
    if V5:  # one rope_parameters dict
        parameters = {"rope_type": scaling.pop("rope_type", "default"),
                      "rope_theta": rope["rope_theta"], "mrope_section": rope["mrope_section"],
                      **scaling}
        if rope["partial_rotary_factor"] is not None:
            parameters["partial_rotary_factor"] = rope["partial_rotary_factor"]
        kwargs["rope_parameters"] = parameters
        if layer_type is not None:
            kwargs.update(num_hidden_layers=2, layer_types=[layer_type, "full_attention"],
                          rope_parameters={layer_type: parameters, "full_attention": None})
    else:  # rope_theta, partial_rotary_factor and rope_scaling (with the sections) apart
        kwargs["rope_theta"] = rope["rope_theta"]
        if scaling.get("rope_type") == "longrope":  # 4.x reads LongRoPE's length at top level
            kwargs["original_max_position_embeddings"] = scaling.pop(
                "original_max_position_embeddings")
        kwargs["rope_scaling"] = {"rope_type": scaling.pop("rope_type", "default"),
                                  "mrope_section": rope["mrope_section"], **scaling}
        if rope["partial_rotary_factor"] is not None:
            kwargs["partial_rotary_factor"] = rope["partial_rotary_factor"]
    return cls(**kwargs)


@contextlib.contextmanager
def cos_sin_in_double():
    """torch's float32 cos/sin evaluated in double and rounded once (mrope's values)."""
    originals = torch.Tensor.cos, torch.Tensor.sin

    def rounded(function):
        def method(tensor):
            if tensor.dtype != torch.float32:
                return function(tensor)
            return function(tensor.double()).float()
        return method

    torch.Tensor.cos, torch.Tensor.sin = map(rounded, originals)
    try:
        yield
    finally:
        torch.Tensor.cos, torch.Tensor.sin = originals


def _apply(modeling, config, q, k, cos, sin):
    """(name, rotated q, k): the family's attention's apply function on the module's cos/sin."""
    multimodal = getattr(modeling, "apply_multimodal_rotary_pos_emb", None)
    if multimodal is not None and cos.dim() == 4:  # per-axis cos/sin: the apply picks sections
        sections = (config.rope_parameters if V5 else config.rope_scaling)["mrope_section"]
        return ("apply_multimodal_rotary_pos_emb",
                *multimodal(q, k, cos, sin, sections))
    return ("apply_rotary_pos_emb", *modeling.apply_rotary_pos_emb(q, k, cos, sin))


def run(case):
    module_name, config_name, rotary_name = MODULES[case["family"]]
    modeling = importlib.import_module(f"transformers.models.{module_name}.modeling_{module_name}")
    configuration = importlib.import_module(
        f"transformers.models.{module_name}.configuration_{module_name}")
    layer_type = LAYER_TYPE.get(case["family"])
    config = _config(getattr(configuration, config_name), case["rope"], layer_type)
    extra = () if layer_type is None else (layer_type,)
    positions = torch.from_numpy(case["position_ids"])
    q, k = torch.from_numpy(case["q"]), torch.from_numpy(case["k"])
    result = {}
    for name, context in (("native", contextlib.nullcontext), ("exact", cos_sin_in_double)):
        with context():
            rotary = getattr(modeling, rotary_name)(config=config)  # fresh: no dynamic state
            cos, sin = rotary(q, positions, *extra)
            apply, q_rotated, k_rotated = _apply(modeling, config, q, k, cos, sin)
        result[name] = {"cos": cos.numpy(), "sin": sin.numpy(), "q": q_rotated.numpy(),
                        "k": k_rotated.numpy()}
        result["apply"] = apply
    return result


def main():
    request = pickle.load(sys.stdin.buffer)
    results = []
    for case in request["cases"]:
        try:
            results.append(run(case))
        except Exception as error:  # noqa: BLE001 (reported to the test, which names it)
            results.append({"error": f"{type(error).__name__}: {error}"})
    sys.stdout.buffer.write(pickle.dumps({"version": transformers.__version__,
                                          "results": results}))


if __name__ == "__main__":
    main()
