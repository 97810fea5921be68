#include "mrope/service/model_spec.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "mrope/common/json.h"
#include "mrope/common/status_macros.h"
#include "mrope/model/conventions.h"
#include "mrope/model/model_family.h"
#include "mrope/rotary/rope_config.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/service/textproto.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;
using ::google::protobuf::util::MessageDifferencer;

// Where a config.json keeps what mrope reads.
struct HfLayout {
  const ModelFamilyInfo* family;
  const Value* root;      // ids, time scales (the thinker config for Omni)
  std::string root_path;  // "" or "thinker_config."
};

absl::StatusOr<HfLayout> LocateHfLayout(const Value& config) {
  MROPE_ASSIGN_OR_RETURN(const Value* type_value, GetField(config, "model_type", "config"));
  MROPE_ASSIGN_OR_RETURN(std::string model_type, AsString(*type_value, "model_type"));
  std::vector<std::string> known;
  for (const ModelFamilyInfo& row : ModelFamilies()) {
    for (const HfModelType& type : row.hf_model_types) {
      known.emplace_back(type.model_type);
      if (type.model_type != model_type) continue;
      if (type.ids_under.empty()) return HfLayout{&row, &config, ""};
      MROPE_ASSIGN_OR_RETURN(const Value* root, GetField(config, type.ids_under, "config"));
      if (root->kind_case() != Value::kStructValue) {
        return absl::InvalidArgumentError(absl::StrCat(type.ids_under, ": expected an object"));
      }
      return HfLayout{&row, root, absl::StrCat(type.ids_under, ".")};
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("model_type '", model_type, "' is not a supported model; supported: ",
                   absl::StrJoin(known, ", ")));
}

// Reads the token id `<name>_token_id` (or HF's alias `<name>_token_index`).
absl::StatusOr<int64_t> ReadTokenId(const HfLayout& layout, absl::string_view name) {
  for (absl::string_view suffix : {"_token_id", "_token_index"}) {
    const std::string key = absl::StrCat(name, suffix);
    if (const Value* v = FindField(*layout.root, key)) {
      return AsInt64(*v, absl::StrCat(layout.root_path, key));
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("missing required field '", layout.root_path,
                                                 name, "_token_id' (or ", name,
                                                 "_token_index) for ", layout.family->name));
}

absl::StatusOr<double> ReadDouble(const Value& object, absl::string_view path_prefix,
                                  absl::string_view key, std::optional<double> fallback,
                                  absl::string_view family) {
  if (const Value* v = FindField(object, key)) return AsDouble(*v, absl::StrCat(path_prefix, key));
  if (fallback.has_value()) return *fallback;
  return absl::InvalidArgumentError(absl::StrCat("missing required field '", path_prefix, key,
                                                 "' for ", family));
}

absl::Status PrefixError(const absl::Status& status, absl::string_view prefix) {
  if (status.ok() || prefix.empty()) return status;
  return absl::Status(status.code(), absl::StrCat(prefix, ": ", status.message()));
}

// HunYuan-VL's rope keys as its configuration class normalizes them, in the rope_parameters or
// rope_scaling object: xdrope_section is mrope_section, rope type "xdrope" is "dynamic", and a
// dynamic rope with a nonzero alpha is NTK by alpha: rewritten as the default type (its alpha
// returned, for the caller to scale rope_theta by).
absl::StatusOr<std::optional<double>> NormalizeXdRope(Value& object) {
  if (object.kind_case() != Value::kStructValue) return std::nullopt;
  std::optional<double> alpha;
  for (const char* name : {"rope_parameters", "rope_scaling"}) {
    auto& fields = *object.mutable_struct_value()->mutable_fields();
    const auto found = fields.find(name);
    if (found == fields.end() || found->second.kind_case() != Value::kStructValue) continue;
    auto& rope = *found->second.mutable_struct_value()->mutable_fields();
    if (const auto xd = rope.find("xdrope_section"); xd != rope.end()) {
      const auto mrope = rope.find("mrope_section");
      if (mrope != rope.end() && !MessageDifferencer::Equals(mrope->second, xd->second)) {
        return absl::InvalidArgumentError(absl::StrCat(
            name, ": mrope_section and xdrope_section are both given and differ"));
      }
      rope["mrope_section"] = xd->second;
      rope.erase("xdrope_section");
    }
    for (const char* type_key : {"rope_type", "type"}) {
      const auto type = rope.find(type_key);
      if (type == rope.end()) continue;
      if (type->second.string_value() == "xdrope") type->second.set_string_value("dynamic");
      const auto given = rope.find("alpha");
      if (type->second.string_value() != "dynamic" || given == rope.end()) continue;
      MROPE_ASSIGN_OR_RETURN(const double value,
                             AsDouble(given->second, absl::StrCat(name, ".alpha")));
      if (value == 0) continue;  // HF: a falsy alpha keeps the dynamic type
      if (!(value > 0) || !std::isfinite(value)) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ".alpha must be finite and > 0, got ", value));
      }
      alpha = value;
      type->second.set_string_value("default");
      rope.erase("alpha");
      rope.erase("factor");
    }
  }
  return alpha;
}

// The number of position axes: the length of the rope's sections, wherever the checkpoint
// keeps them (HunyuanOCR: top-level rope_scaling.xdrope_section; transformers 5.x:
// text_config.rope_parameters.mrope_section).
absl::StatusOr<int32_t> ReadNumAxes(const HfLayout& layout) {
  const Value* text = FindField(*layout.root, "text_config");
  for (const Value* object : {text, layout.root}) {
    if (object == nullptr) continue;
    for (absl::string_view rope_key : {"rope_parameters", "rope_scaling"}) {
      const Value* rope = FindField(*object, rope_key);
      if (rope == nullptr) continue;
      for (absl::string_view sections_key : {"mrope_section", "xdrope_section"}) {
        const Value* sections = FindField(*rope, sections_key);
        if (sections == nullptr) continue;
        if (sections->kind_case() != Value::kListValue) {
          return absl::InvalidArgumentError(absl::StrCat(
              layout.root_path, object == text ? "text_config." : "", rope_key, ".",
              sections_key, ": expected a list"));
        }
        return sections->list_value().values_size();
      }
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "missing required field '", layout.root_path,
      "rope_scaling.xdrope_section' (or [text_config.]rope_parameters.mrope_section) for ",
      layout.family->name, ": its length is the number of position axes"));
}

absl::StatusOr<ModelConfig> PositionsFromHfConfig(const HfLayout& layout) {
  const ModelFamilyInfo& family = *layout.family;
  ModelConfig config;
  config.rules = &family.rules;
  config.convention = family.preset.convention;
  config.spatial_merge_size = family.preset.spatial_merge_size;  // the class default
  for (const TokenKey& key : family.rules.token_keys) {
    const auto present = [&](absl::string_view suffix) {
      return FindField(*layout.root, absl::StrCat(key.hf_name, suffix)) != nullptr;
    };
    if (key.tokenizer_default && !present("_token_id") && !present("_token_index")) {
      config.tokens.*key.field = family.preset.tokens.*key.field;
      continue;
    }
    MROPE_ASSIGN_OR_RETURN(config.tokens.*key.field, ReadTokenId(layout, key.hf_name));
  }
  const PositionPolicy policy = PolicyFor(config);
  if (UsesPositionIdPerSeconds(policy)) {
    // The transformers class default (25) is not Qwen3-Omni's (13): require the checkpoint's.
    MROPE_ASSIGN_OR_RETURN(config.position_id_per_seconds,
                           ReadDouble(*layout.root, layout.root_path, "position_id_per_seconds",
                                      std::nullopt, family.name));
    MROPE_ASSIGN_OR_RETURN(config.seconds_per_chunk,
                           ReadDouble(*layout.root, layout.root_path, "seconds_per_chunk", 2.0,
                                      family.name));
  }
  const std::string vision_path = absl::StrCat(layout.root_path, "vision_config.");
  const Value* vision = FindField(*layout.root, "vision_config");
  const Value empty;
  if (vision == nullptr) vision = &empty;
  const absl::string_view merge_key = family.spatial_merge_key;
  if (const Value* v = FindField(*vision, merge_key)) {
    MROPE_ASSIGN_OR_RETURN(int64_t merge, AsInt64(*v, absl::StrCat(vision_path, merge_key)));
    if (merge < 1 || merge > 64) {
      return absl::InvalidArgumentError(
          absl::StrCat(vision_path, merge_key, " must be in [1, 64], got ", merge));
    }
    config.spatial_merge_size = static_cast<int32_t>(merge);
  }
  if (family.preset.temporal_merge_size > 1) {
    // ERNIE merges a video's t: vision_config.temporal_merge_size, else the class default.
    MROPE_ASSIGN_OR_RETURN(const double merge,
                           ReadDouble(*vision, vision_path, "temporal_merge_size",
                                      family.preset.temporal_merge_size, family.name));
    if (merge < 1 || merge > 64 || merge != static_cast<int32_t>(merge)) {
      return absl::InvalidArgumentError(absl::StrCat(
          vision_path, "temporal_merge_size must be an integer in [1, 64], got ", merge));
    }
    config.temporal_merge_size = static_cast<int32_t>(merge);
  }
  if (UsesTokensPerSecond(policy)) {
    // The transformers class default (4) is not the checkpoints' (2): require it.
    MROPE_ASSIGN_OR_RETURN(config.tokens_per_second,
                           ReadDouble(*vision, vision_path, "tokens_per_second", std::nullopt,
                                      family.name));
  }
  if (policy.scheme == PositionScheme::kSequentialGrid) {
    MROPE_ASSIGN_OR_RETURN(config.num_axes, ReadNumAxes(layout));
  }
  MROPE_RETURN_IF_ERROR(ValidateModelConfig(config));
  return config;
}

// The proto's enum values are the family names in upper case.
absl::StatusOr<ModelFamily> FamilyFromProto(v1::PositionParams::Family family) {
  if (family != v1::PositionParams::FAMILY_UNSPECIFIED) {
    const auto parsed =
        ParseModelFamily(absl::AsciiStrToLower(v1::PositionParams::Family_Name(family)));
    if (parsed.ok()) return *parsed;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("positions.family must be set to a model family, got ",
                   v1::PositionParams::Family_Name(family)));
}

absl::StatusOr<ModelConfig> PositionsFromProto(const v1::PositionParams& p) {
  MROPE_ASSIGN_OR_RETURN(const ModelFamily family, FamilyFromProto(p.family()));
  ModelConfig config = FamilyInfo(family).preset;
  SpecialTokens& ids = config.tokens;
  if (p.has_image_token_id()) ids.image = p.image_token_id();
  if (p.has_video_token_id()) ids.video = p.video_token_id();
  if (p.has_vision_start_token_id()) ids.vision_start = p.vision_start_token_id();
  if (p.has_vision_end_token_id()) ids.vision_end = p.vision_end_token_id();
  if (p.has_audio_token_id()) ids.audio = p.audio_token_id();
  if (p.has_audio_start_token_id()) ids.audio_start = p.audio_start_token_id();
  if (p.has_audio_end_token_id()) ids.audio_end = p.audio_end_token_id();
  if (p.has_video_start_token_id()) ids.video_start = p.video_start_token_id();
  if (p.has_video_end_token_id()) ids.video_end = p.video_end_token_id();
  if (p.has_spatial_merge_size()) config.spatial_merge_size = p.spatial_merge_size();
  if (p.has_tokens_per_second()) config.tokens_per_second = p.tokens_per_second();
  if (p.has_position_id_per_seconds()) {
    config.position_id_per_seconds = p.position_id_per_seconds();
  }
  if (p.has_seconds_per_chunk()) config.seconds_per_chunk = p.seconds_per_chunk();
  config.video_time_rounding =
      p.video_time_rounding() == v1::PositionParams::TRUNCATE_INTERVAL_FIRST
          ? VideoTimeRounding::kTruncateIntervalFirst
          : VideoTimeRounding::kScaleThenTruncate;
  if (p.has_temporal_merge_size()) config.temporal_merge_size = p.temporal_merge_size();
  if (p.has_num_axes()) config.num_axes = p.num_axes();
  switch (p.convention()) {
    case v1::PositionParams::VLLM:
      config.convention = Convention::kVllm;
      break;
    case v1::PositionParams::HF_V4:
      config.convention = Convention::kHfV4;
      break;
    case v1::PositionParams::HF_V5_2:
      config.convention = Convention::kHfV5_2;
      break;
    case v1::PositionParams::HF_V5:
      config.convention = Convention::kHfV5;
      break;
    case v1::PositionParams::HF_V5_18:
      config.convention = Convention::kHfV5_18;
      break;
    default:  // HF: the family's reference, the preset's
      break;
  }
  if (!p.convention_release().empty()) {
    if (p.convention() != v1::PositionParams::HF) {
      return absl::InvalidArgumentError(
          "positions.convention_release: set it or convention, not both");
    }
    absl::StatusOr<Convention> convention = ResolveConvention(family, p.convention_release());
    if (!convention.ok()) return PrefixError(convention.status(), "positions.convention_release");
    config.convention = *convention;
    if (p.video_time_rounding() != v1::PositionParams::TRUNCATE_INTERVAL_FIRST) {
      config.video_time_rounding = ConventionRulesOf(*convention).reference_video_time;
    }
  }
  MROPE_RETURN_IF_ERROR(PrefixError(ValidateModelConfig(config), "positions"));
  return config;
}

// What `preset`'s family code decides beyond config.json's rotary keys.
RopeConfigRules RulesOf(const RopePreset& preset) {
  RopeConfigRules rules;
  // The rotary code of a transformers 5.x family decides the layout.
  if (preset.sections == SectionSource::kRotaryCode) rules.layout = preset.mrope_layout;
  rules.interleaved_layout = preset.interleaved_layout;
  rules.default_head_dim = preset.default_head_dim;
  return rules;
}

absl::StatusOr<RopeParameters> RopeFromProto(const v1::RopeParams& rope,
                                             const RopePreset& preset) {
  // The proto's fields are HF's keys, so its JSON is a flattened HF rope config: one parser,
  // one set of defaults and checks.
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  const auto printed = google::protobuf::util::MessageToJsonString(rope, &json, options);
  if (!printed.ok()) {
    return absl::InternalError(absl::StrCat("rope: ", std::string(printed.message())));
  }
  MROPE_ASSIGN_OR_RETURN(const Value value, ParseJson(json));
  auto params = ParseRopeParameters(value, RulesOf(preset));
  if (!params.ok()) return PrefixError(params.status(), "rope");
  return params;
}

// Appends `layer_type`'s rotary to spec.layer_type_ropes unless it is there already; `rope`
// makes it (nullopt: NoPE).
template <typename MakeRope>
absl::Status AddLayerType(ModelSpec& spec, const std::string& layer_type, MakeRope rope) {
  spec.layer_types.push_back(layer_type);
  for (const LayerTypeRope& known : spec.layer_type_ropes) {
    if (known.layer_type == layer_type) return absl::OkStatus();
  }
  LayerTypeRope& added = spec.layer_type_ropes.emplace_back();
  added.layer_type = layer_type;
  MROPE_ASSIGN_OR_RETURN(added.rope, rope());
  return absl::OkStatus();
}

// Cohere Compass's text_config: layer_types (HF's default: num_hidden_layers full_attention
// layers) and rope_parameters keyed by them, as its rotary module reads them (a missing type
// fails there; null is NoPE). Each type's entry is read as a rope object whose head_dim is
// hidden_size / num_attention_heads, as Cohere2's config sets it (a head_dim key is not read).
absl::Status RopesByLayerType(const Value& text, absl::string_view path, ModelSpec& spec) {
  const std::string prefix = path.empty() ? "" : absl::StrCat(path, ".");
  const absl::string_view family = FamilyOf(spec.positions).name;
  std::vector<std::string> layer_types;
  if (const Value* types = FindField(text, "layer_types")) {
    if (types->kind_case() != Value::kListValue) {
      return absl::InvalidArgumentError(absl::StrCat(prefix, "layer_types: expected a list"));
    }
    for (int i = 0; i < types->list_value().values_size(); ++i) {
      MROPE_ASSIGN_OR_RETURN(layer_types.emplace_back(),
                             AsString(types->list_value().values(i),
                                      absl::StrCat(prefix, "layer_types[", i, "]")));
    }
  } else {
    MROPE_ASSIGN_OR_RETURN(const double layers, ReadDouble(text, prefix, "num_hidden_layers",
                                                            40.0, family));
    layer_types.assign(static_cast<size_t>(std::max(layers, 0.0)), "full_attention");
  }
  const Value* ropes = FindField(text, "rope_parameters");
  if (ropes == nullptr || ropes->kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(
        "missing required field '", prefix, "rope_parameters' (an object with one rotary per "
        "layer type, null for NoPE) for ", family));
  }
  Value dims;  // what the entries read besides their own keys
  auto& dim_fields = *dims.mutable_struct_value()->mutable_fields();
  for (const auto& [key, fallback] : {std::make_pair("hidden_size", 8192.0),
                                      std::make_pair("num_attention_heads", 64.0),
                                      std::make_pair("max_position_embeddings", 8192.0)}) {
    MROPE_ASSIGN_OR_RETURN(const double value, ReadDouble(text, prefix, key, fallback, family));
    dim_fields[key].set_number_value(value);
  }
  for (const std::string& layer_type : layer_types) {
    MROPE_RETURN_IF_ERROR(AddLayerType(
        spec, layer_type, [&]() -> absl::StatusOr<std::optional<RopeParameters>> {
          const std::string entry_path =
              absl::StrCat(prefix, "rope_parameters.", layer_type);
          const auto& entries = ropes->struct_value().fields();
          const auto found = entries.find(layer_type);  // FindField reads null as absent
          if (found == entries.end()) {
            return absl::InvalidArgumentError(absl::StrCat(
                "missing required field '", entry_path, "' for ", family,
                " (its rotary module reads one entry per layer type; null for NoPE)"));
          }
          const Value* entry = &found->second;
          if (entry->kind_case() == Value::kNullValue) return std::nullopt;
          if (const Value* factor = FindField(*entry, "partial_rotary_factor");
              factor != nullptr && factor->number_value() != 1.0) {
            // transformers' default rope rotates the whole head whatever it says, vLLM a part.
            return absl::InvalidArgumentError(absl::StrCat(
                entry_path, ".partial_rotary_factor: transformers and vLLM disagree on ",
                family, "'s partial rotary; only 1 is supported, got ", factor->number_value()));
          }
          Value object = dims;
          auto& fields = *object.mutable_struct_value()->mutable_fields();
          fields["rope_parameters"] = *entry;
          // transformers 5.x's LongRoPE reads its original length from the type's entry, which
          // mrope's reader takes from the top level (Phi-3's place).
          if (const Value* original = FindField(*entry, "original_max_position_embeddings")) {
            fields["original_max_position_embeddings"] = *original;
          }
          return RopeFromConfigObject(spec.positions, object, entry_path);
        }));
  }
  return absl::OkStatus();
}

// The row's preset layer types: its NoPE types rotate nothing, the others take `rope`.
absl::Status PresetLayerTypes(const ModelFamilyInfo& row, const RopeParameters& rope,
                              ModelSpec& spec) {
  for (const absl::string_view layer_type : row.preset_layer_types) {
    const bool nope = absl::c_linear_search(row.preset_nope_layer_types, layer_type);
    MROPE_RETURN_IF_ERROR(AddLayerType(spec, std::string(layer_type), [&]() {
      return absl::StatusOr<std::optional<RopeParameters>>(
          nope ? std::nullopt : std::optional<RopeParameters>(rope));
    }));
  }
  return absl::OkStatus();
}

// A SectionSource::kHeadDim family's code overwrites config.json's mrope_section: it is read
// nowhere.
void EraseSections(Value& object) {
  auto& fields = *object.mutable_struct_value()->mutable_fields();
  fields.erase("mrope_section");
  for (const absl::string_view rope_object : {"rope_parameters", "rope_scaling"}) {
    auto it = fields.find(std::string(rope_object));
    if (it != fields.end() && it->second.kind_case() == Value::kStructValue) {
      it->second.mutable_struct_value()->mutable_fields()->erase("mrope_section");
    }
  }
}

// The sections `family` derives from `top_level`'s head_dim (RopePreset::default_head_dim
// when absent), which must fill the rotary: vLLM's MRotaryEmbedding asserts that they do.
absl::Status SectionsFromTopLevelHeadDim(const ModelFamilyInfo& family, const Value& top_level,
                                         absl::string_view path, RopeParameters& rope) {
  int64_t head_dim = family.rope.default_head_dim;
  if (const Value* value = FindField(top_level, "head_dim")) {
    MROPE_ASSIGN_OR_RETURN(head_dim, AsInt64(*value, "head_dim"));
    if (head_dim < 1 || head_dim > kMaxHeadDim) {
      return absl::InvalidArgumentError(
          absl::StrCat("head_dim must be in [1, ", kMaxHeadDim, "], got ", head_dim));
    }
  }
  std::vector<int32_t> sections = SectionsFromHeadDim(family.rope, head_dim);
  int64_t pairs = 0;
  for (const int32_t s : sections) pairs += s;
  if (pairs != rope.scaling.rotary_dim / 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "head_dim: ", family.name, " derives mrope_section [", absl::StrJoin(sections, ", "),
        "] from the top-level head_dim ", head_dim, " (head_dim // ",
        absl::StrJoin(family.rope.head_dim_divisors, ", // "), ", as vLLM does), which must sum "
        "to rotary_dim / 2 = ", rope.scaling.rotary_dim / 2, " of ", path, path.empty() ? "" : ".",
        "head_dim ", rope.head_dim, " (vLLM's MRotaryEmbedding refuses it too)"));
  }
  rope.mrope_section = std::move(sections);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ModelSpec> PresetModelSpec(absl::string_view name) {
  ModelSpec spec;
  spec.name = std::string(name);
  MROPE_ASSIGN_OR_RETURN(spec.positions, PresetConfig(name));
  MROPE_ASSIGN_OR_RETURN(spec.rope, RopeFromConfigObject(spec.positions,
                                                         PresetRopeObject(spec.positions), ""));
  const ModelFamilyInfo& row = FamilyOf(spec.positions);
  if (!row.preset_layer_types.empty()) {
    MROPE_RETURN_IF_ERROR(PresetLayerTypes(row, *spec.rope, spec));
    spec.rope.reset();
  }
  return spec;
}

absl::StatusOr<ModelSpec> ModelSpecForLayerType(const ModelSpec& spec,
                                                absl::string_view layer_type) {
  std::vector<absl::string_view> names;
  for (const LayerTypeRope& type : spec.layer_type_ropes) {
    if (type.layer_type == layer_type) {
      ModelSpec picked = spec;
      picked.name = absl::StrCat(spec.name, " [", layer_type, "]");
      picked.rope = type.rope;
      picked.layer_types.clear();
      picked.layer_type_ropes.clear();
      return picked;
    }
    names.push_back(type.layer_type);
  }
  if (names.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "layer_type '", layer_type, "': model '", spec.name,
        "' has one rotary for all its layers (no layer types)"));
  }
  return absl::InvalidArgumentError(absl::StrCat("layer_type '", layer_type, "': model '",
                                                 spec.name, "' has no such layer; its types: ",
                                                 absl::StrJoin(names, ", ")));
}

absl::StatusOr<const RopeParameters*> SingleRope(const ModelSpec& spec) {
  if (spec.rope.has_value()) return &*spec.rope;
  if (spec.layer_type_ropes.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("model '", spec.name, "' has no rotary parameters (positions only)"));
  }
  std::vector<absl::string_view> names;
  for (const LayerTypeRope& type : spec.layer_type_ropes) names.push_back(type.layer_type);
  return absl::FailedPreconditionError(absl::StrCat(
      "model '", spec.name, "' has a rotary per layer type (", absl::StrJoin(names, ", "),
      "): pick one (Python Model.for_layer_type or cos_sin(layer_type=...), CLI --layer_type, "
      "C mrope_model_for_layer_type)"));
}

Value PresetRopeObject(const ModelConfig& positions) {
  const RopePreset& preset = FamilyOf(positions).rope;
  Value object;
  auto& fields = *object.mutable_struct_value()->mutable_fields();
  fields["rope_theta"].set_number_value(preset.theta);
  fields["head_dim"].set_number_value(preset.head_dim);
  fields["partial_rotary_factor"].set_number_value(preset.partial_rotary_factor);
  auto& sections = *fields["mrope_section"].mutable_list_value();
  for (const int32_t s : preset.mrope_section) sections.add_values()->set_number_value(s);
  fields["mrope_interleaved"].set_bool_value(preset.mrope_layout == preset.interleaved_layout);
  return object;
}

absl::StatusOr<RopeParameters> RopeFromConfigObject(const ModelConfig& positions,
                                                    const Value& object, absl::string_view path,
                                                    const Value* top_level) {
  const ModelFamilyInfo& family = FamilyOf(positions);
  const RopePreset& preset = family.rope;
  Value normalized = object;
  if (preset.sections == SectionSource::kHeadDim) EraseSections(normalized);
  std::optional<double> alpha;
  if (preset.ntk_alpha) {
    absl::StatusOr<std::optional<double>> taken = NormalizeXdRope(normalized);
    if (!taken.ok()) return PrefixError(taken.status(), path);
    alpha = *taken;
  }
  auto rope = ParseRopeParameters(normalized, RulesOf(preset));
  if (!rope.ok()) return PrefixError(rope.status(), path);
  if (alpha.has_value()) {
    // HunYuanVLRotaryEmbedding.compute_ntk_alpha_rope_parameters, in Python floats.
    const double d = rope->head_dim;
    rope->scaling.theta *= std::pow(*alpha, d / (d - 2));
    if (!std::isfinite(rope->scaling.theta) || rope->scaling.theta > kMaxRopeBase) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, path.empty() ? "" : ".", "alpha: rope_theta * alpha^(head_dim / (head_dim - 2)) "
          "must be at most ", kMaxRopeBase, ", got ", rope->scaling.theta));
    }
  }
  if (preset.sections == SectionSource::kConfigRequired && rope->mrope_section.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "missing required field '", path, path.empty() ? "" : ".",
        "rope_scaling.mrope_section' (or rope_parameters.mrope_section) for ", family.name));
  }
  if (preset.sections == SectionSource::kRotaryCode) {
    if (rope->mrope_section.empty()) {
      rope->mrope_section.assign(preset.mrope_section.begin(), preset.mrope_section.end());
    }
    rope->mrope_layout = preset.mrope_layout;
  }
  if (preset.sections == SectionSource::kHeadDim) {
    MROPE_RETURN_IF_ERROR(SectionsFromTopLevelHeadDim(
        family, top_level != nullptr ? *top_level : object, path, *rope));
  }
  return rope;
}

absl::StatusOr<ModelSpec> ModelSpecFromHfConfig(const Value& config) {
  if (config.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError("config: expected a JSON object");
  }
  MROPE_ASSIGN_OR_RETURN(const HfLayout layout, LocateHfLayout(config));
  ModelSpec spec;
  spec.name = config.struct_value().fields().at("model_type").string_value();
  MROPE_ASSIGN_OR_RETURN(spec.positions, PositionsFromHfConfig(layout));
  const Value* text = FindField(*layout.root, "text_config");
  const std::string text_path =
      text != nullptr ? absl::StrCat(layout.root_path, "text_config") : layout.root_path;
  const Value& rope_object = text != nullptr ? *text : *layout.root;
  if (!layout.family->preset_layer_types.empty()) {
    MROPE_RETURN_IF_ERROR(
        RopesByLayerType(rope_object, absl::StripSuffix(text_path, "."), spec));
    return spec;
  }
  MROPE_ASSIGN_OR_RETURN(spec.rope, RopeFromConfigObject(spec.positions, rope_object,
                                                         absl::StripSuffix(text_path, "."),
                                                         layout.root));
  return spec;
}

absl::StatusOr<std::optional<ConfigFile>> ReadConfigFile(const std::string& preset_or_path) {
  std::error_code error;
  if (std::filesystem::is_directory(preset_or_path, error)) {
    return ReadConfigFile((std::filesystem::path(preset_or_path) / "config.json").string());
  }
  if (!std::filesystem::is_regular_file(preset_or_path, error)) return std::nullopt;
  ConfigFile file;
  file.path = preset_or_path;
  MROPE_ASSIGN_OR_RETURN(file.text, ReadFileToString(preset_or_path));
  return file;
}

absl::StatusOr<ModelSpec> ModelSpecFromConfigFile(const ConfigFile& file) {
  absl::StatusOr<ModelSpec> spec;
  if (IsTextprotoPath(file.path)) {
    v1::ModelParams params;
    MROPE_RETURN_IF_ERROR(ParseTextproto(file.text, file.path, params));
    spec = ModelSpecFromProto(params);
  } else {
    MROPE_ASSIGN_OR_RETURN(const Value json, ParseJson(file.text));
    spec = ModelSpecFromHfConfig(json);
  }
  if (!spec.ok()) return PrefixError(spec.status(), file.path);
  if (spec->name.empty() || !IsTextprotoPath(file.path)) spec->name = file.path;
  return spec;
}

absl::StatusOr<ModelSpec> LoadModelSpec(const std::string& preset_or_path) {
  MROPE_ASSIGN_OR_RETURN(const std::optional<ConfigFile> file, ReadConfigFile(preset_or_path));
  if (file.has_value()) return ModelSpecFromConfigFile(*file);
  auto preset = PresetModelSpec(preset_or_path);
  if (preset.ok()) return preset;
  return absl::InvalidArgumentError(
      absl::StrCat("'", preset_or_path, "' is neither a config file nor a preset (",
                   preset.status().message(), ")"));
}

absl::StatusOr<ModelSpec> ModelSpecFromProto(const v1::ModelParams& params) {
  ModelSpec spec;
  spec.name = params.name();
  MROPE_ASSIGN_OR_RETURN(spec.positions, PositionsFromProto(params.positions()));
  if (params.has_rope() && !FamilyOf(spec.positions).preset_layer_types.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rope: ", FamilyOf(spec.positions).name,
        "'s rotary is per layer type, which ModelParams cannot hold; load its config.json"));
  }
  if (params.has_rope()) {
    // As for config.json: the family's code decides what its config does not say.
    MROPE_ASSIGN_OR_RETURN(spec.rope,
                           RopeFromProto(params.rope(), FamilyOf(spec.positions).rope));
  }
  return spec;
}

RotaryLayout RotaryLayoutOf(const ModelSpec& spec) {
  return FamilyOf(spec.positions).rope.layout;
}

}  // namespace mrope
