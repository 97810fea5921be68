#ifndef MROPE_SERVICE_MODEL_SPEC_H_
#define MROPE_SERVICE_MODEL_SPEC_H_

// A model as mrope serves it: its position parameters (mrope/positions/model_config.h) plus,
// optionally, its rotary parameters (mrope/rotary/rope_params.h) for cos/sin. Built from a
// built-in preset, from the model's own HF config.json, or from the ModelParams proto.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "mrope/positions/model_config.h"
#include "mrope/rotary/rope_params.h"
#include "proto/mrope.pb.h"

namespace mrope {

// One attention layer type's rotary, in a model whose rotary is per layer type.
struct LayerTypeRope {
  std::string layer_type;
  std::optional<RopeParameters> rope;  // absent: a NoPE type, it rotates nothing
};

struct ModelSpec {
  std::string name;  // preset name, config path or model_type: used in messages and tables
  ModelConfig positions;
  std::optional<RopeParameters> rope;  // absent: positions only, or a rotary per layer type
  // A rotary per attention layer type (the family row's preset_layer_types is non-empty:
  // Cohere Compass): each layer's type, as config.json's layer_types lists them, and each
  // type's rotary in order of first use. `rope` is then absent: ModelSpecForLayerType picks a
  // type's. Empty for the other families.
  std::vector<std::string> layer_types;
  std::vector<LayerTypeRope> layer_type_ropes;
};

// `spec` with `rope` the rotary of its layer type `layer_type` (absent for a NoPE type), no
// layer types, and the name "<name> [<layer_type>]". InvalidArgument when `spec` has one rotary for all layers, or no layer of that
// type (naming its types).
absl::StatusOr<ModelSpec> ModelSpecForLayerType(const ModelSpec& spec,
                                                absl::string_view layer_type);

// &*spec.rope; FailedPrecondition when it is absent, saying why: positions only, or a rotary
// per layer type (naming the types, and ModelSpecForLayerType's front ends).
absl::StatusOr<const RopeParameters*> SingleRope(const ModelSpec& spec);

// How `spec`'s family pairs its rotary dims (its row's RopePreset::layout: GPT-J pairs for
// GLM-4.1V, NeoX halves otherwise).
RotaryLayout RotaryLayoutOf(const ModelSpec& spec);

// The presets of PresetConfig (mrope/model/model_family.h) with the published checkpoints'
// rotary parameters (the family row's RopePreset, tests/golden/README.md): head_dim 128; theta
// 1e6 and blocked [16, 24, 24] (Qwen2-VL, Qwen2.5-VL, Qwen2.5-Omni); theta 5e6 (Qwen3-VL) or
// 1e6 (Qwen3-Omni) with interleaved [24, 20, 20]; theta 1e4, rotary_dim 64 (partial rotary
// 0.5) and blocked [8, 12, 12] (GLM-4.1V, GLM-4.5V, GLM-4.6V, GLM-Image); the transformers 5.x
// families' class defaults for the others.
absl::StatusOr<ModelSpec> PresetModelSpec(absl::string_view name);

// A model's HF config.json, as published on the Hub, picked by its `model_type` (the family
// table's hf_model_types, mrope/model/model_family.h, which also says where the ids sit):
//   qwen2_vl, qwen2_5_vl          ids at top level, vision_config.spatial_merge_size,
//                                 vision_config.tokens_per_second (Qwen2.5-VL, required), rope
//                                 keys at top level or in text_config
//   qwen3_vl, qwen3_vl_moe        ids at top level, rope keys in text_config
//   qwen2_5_omni, qwen3_omni_moe  everything under thinker_config (or a bare *_thinker config):
//                                 ids (`*_token_index` or `*_token_id`), position_id_per_seconds
//                                 (required), seconds_per_chunk, vision_config, text_config
//   glm4v, glm4v_moe, glm46v,     ids at top level (image, video, image_start, image_end,
//   glm_ocr, ernie4_5_vl_moe      video_start, video_end), rope keys in text_config
//                                 (partial_rotary_factor, rope_scaling / rope_parameters);
//                                 ERNIE: vision_config.temporal_merge_size (default 2)
//   qwen3_5, qwen3_5_moe          as qwen3_vl (rope_parameters in text_config)
//   paddleocr_vl                  flat: ids and rope keys at top level (mrope_section required)
//   glm_image                     ids image, image_start, image_end at top level, rope keys in
//                                 text_config; spatial_merge_size defaults to 1
//   cohere_compass                as qwen3_vl, with a rotary per layer type: text_config's
//                                 layer_types (default num_hidden_layers, 40, full_attention)
//                                 and rope_parameters keyed by type (required; null: NoPE),
//                                 head_dim hidden_size / num_attention_heads (8192 / 64)
//   isaac                         rope keys in text_config or at top level; mrope_section
//                                 derived from the top-level head_dim (RopePreset::sections);
//                                 head_dim absent: IsaacConfig's (RopePreset::default_head_dim)
// The token ids of the family's row are required (either HF spelling: image_token_id or
// image_token_index); spatial_merge_size defaults to the preset's (2; GLM-Image 1) and
// seconds_per_chunk to 2, as in HF's config classes. The rotary keys are read by
// RopeFromConfigObject.
// Unknown keys are ignored; a missing required key is InvalidArgument naming its path. The
// video time rounding is SCALE_THEN_TRUNCATE and the convention the family's reference (hf_v4,
// or hf_v5_2 for the 5.x families); callers override them afterwards if needed.
absl::StatusOr<ModelSpec> ModelSpecFromHfConfig(const google::protobuf::Value& config);

// The rotary parameters of a model of `positions`' family from the config.json object that holds
// its rope keys (`object`, at `path` for messages: "", "text_config", ...): ParseRopeParameters
// (mrope/rotary/rope_config.h), then the family's section rules (RopePreset::sections): a
// required mrope_section, the 5.x rotary code's default mrope_section and its interleaving, or
// sections derived from the head_dim of `top_level` (config.json's top level where `object` is
// its text_config; default `object`).
absl::StatusOr<RopeParameters> RopeFromConfigObject(
    const ModelConfig& positions, const google::protobuf::Value& object, absl::string_view path,
    const google::protobuf::Value* top_level = nullptr);

// The family row's rotary values (RopePreset) as the flat config.json rope keys they stand for:
// rope_theta, head_dim, partial_rotary_factor, mrope_section and mrope_interleaved.
// RopeFromConfigObject of it is the preset's rope.
google::protobuf::Value PresetRopeObject(const ModelConfig& positions);

// `preset_or_path`: an existing file is read as an HF config.json (or, for .textproto / .txtpb /
// .pbtxt, as a ModelParams textproto), a directory as its config.json (a downloaded
// checkpoint); otherwise it must be a preset name.
absl::StatusOr<ModelSpec> LoadModelSpec(const std::string& preset_or_path);

// A config file as LoadModelSpec reads it: its path (the extension picks the parser and the
// path names the model) and its contents, e.g. to rebuild the same model in another process.
struct ConfigFile {
  std::string path;
  std::string text;
};

// The file LoadModelSpec would read for `preset_or_path` (a directory's config.json), or
// nullopt when no such file exists (then it can only be a preset name).
absl::StatusOr<std::optional<ConfigFile>> ReadConfigFile(const std::string& preset_or_path);

// LoadModelSpec of a file already read: the same model whatever machine `file` came from.
absl::StatusOr<ModelSpec> ModelSpecFromConfigFile(const ConfigFile& file);

// From the proto: starts from the family's preset and applies the set
// fields; `rope` is parsed with HF's defaults when present.
absl::StatusOr<ModelSpec> ModelSpecFromProto(const v1::ModelParams& params);

}  // namespace mrope

#endif  // MROPE_SERVICE_MODEL_SPEC_H_
