#include "mrope/service/preset_overrides.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/message_differencer.h"
#include "mrope/common/json.h"
#include "mrope/common/status_macros.h"
#include "mrope/model/model_family.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;
using ::google::protobuf::util::MessageDifferencer;

// Reads an override's value (at `path`, for messages) into the position parameters.
using PositionSetter =
    std::function<absl::Status(const Value& value, const std::string& path, ModelConfig& config)>;

struct OverrideKey {
  std::string name;
  PositionSetter set_position;  // null for a rope key: it goes to the config.json rope reader
};

// A merge size, in [1, 64] before it is narrowed to int32.
PositionSetter MergeSize(int32_t ModelConfig::*field) {
  return [field](const Value& value, const std::string& path, ModelConfig& config) {
    MROPE_ASSIGN_OR_RETURN(const int64_t merge, AsInt64(value, path));
    if (merge < 1 || merge > 64) {
      return absl::InvalidArgumentError(absl::StrCat(path, " must be in [1, 64], got ", merge));
    }
    config.*field = static_cast<int32_t>(merge);
    return absl::OkStatus();
  };
}

// A time scale (ValidateModelConfig checks its range).
PositionSetter TimeScale(double ModelConfig::*field) {
  return [field](const Value& value, const std::string& path, ModelConfig& config) {
    MROPE_ASSIGN_OR_RETURN(config.*field, AsDouble(value, path));
    return absl::OkStatus();
  };
}

absl::Status SetVideoTimeRounding(const Value& value, const std::string& path,
                                  ModelConfig& config) {
  MROPE_ASSIGN_OR_RETURN(const std::string rounding, AsString(value, path));
  if (rounding == "scale_then_truncate") {
    config.video_time_rounding = VideoTimeRounding::kScaleThenTruncate;
  } else if (rounding == "truncate_interval_first") {
    config.video_time_rounding = VideoTimeRounding::kTruncateIntervalFirst;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " must be scale_then_truncate or truncate_interval_first, got '", rounding, "'"));
  }
  return absl::OkStatus();
}

// Every key `preset` takes (the header's list): the position values its family's config.json
// gives (ModelSpecFromHfConfig reads the same ones), then the text config's rope keys.
std::vector<OverrideKey> OverrideKeys(const ModelConfig& preset) {
  std::vector<OverrideKey> keys;
  for (const TokenKey& key : preset.rules->token_keys) {
    keys.push_back({absl::StrCat(key.hf_name, "_token_id"),
                    [field = key.field](const Value& value, const std::string& path,
                                        ModelConfig& config) {
                      MROPE_ASSIGN_OR_RETURN(config.tokens.*field, AsInt64(value, path));
                      return absl::OkStatus();
                    }});
  }
  keys.push_back({"spatial_merge_size", MergeSize(&ModelConfig::spatial_merge_size)});
  if (FamilyOf(preset).preset.temporal_merge_size > 1) {
    keys.push_back({"temporal_merge_size", MergeSize(&ModelConfig::temporal_merge_size)});
  }
  const PositionPolicy policy = PolicyFor(preset);
  if (UsesTokensPerSecond(policy)) {
    keys.push_back({"tokens_per_second", TimeScale(&ModelConfig::tokens_per_second)});
    keys.push_back({"video_time_rounding", SetVideoTimeRounding});
  }
  if (UsesPositionIdPerSeconds(policy)) {
    keys.push_back({"position_id_per_seconds", TimeScale(&ModelConfig::position_id_per_seconds)});
    keys.push_back({"seconds_per_chunk", TimeScale(&ModelConfig::seconds_per_chunk)});
  }
  for (const char* rope_key :
       {"rope_theta", "head_dim", "hidden_size", "num_attention_heads", "partial_rotary_factor",
        "max_position_embeddings", "original_max_position_embeddings", "mrope_section",
        "mrope_interleaved", "rope_scaling"}) {
    keys.push_back({rope_key, nullptr});
  }
  return keys;
}

absl::Status Prefixed(const absl::Status& status, absl::string_view what) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

std::string KeyList(const std::vector<OverrideKey>& keys) {
  std::vector<absl::string_view> names;
  for (const OverrideKey& key : keys) names.push_back(key.name);
  return absl::StrJoin(names, ", ");
}

// The sequence lengths where `a` or `b` may change: 1, and either side of each one's reference
// length (dynamic NTK scales past it; LongRoPE switches factors there).
std::vector<int64_t> ProbeLengths(const RopeParameters& a, const RopeParameters& b) {
  std::vector<int64_t> lengths = {1};
  for (const int64_t length : {a.scaling.original_max_position_embeddings,
                               b.scaling.original_max_position_embeddings}) {
    if (length > 0) lengths.insert(lengths.end(), {length, length + 1});
  }
  return lengths;
}

// Whether `a` and `b` rotate every q/k alike: the same RotarySpec (dims, axis map, inv_freq bit
// for bit, attention scaling) at every length where either may change.
absl::StatusOr<bool> SameRotary(const RopeParameters& a, const RopeParameters& b,
                                RotaryLayout layout) {
  for (const int64_t length : ProbeLengths(a, b)) {
    MROPE_ASSIGN_OR_RETURN(const RotarySpec x, BuildRotarySpec(a, layout, length));
    MROPE_ASSIGN_OR_RETURN(const RotarySpec y, BuildRotarySpec(b, layout, length));
    if (x.head_dim != y.head_dim || x.rotary_dim != y.rotary_dim ||
        x.attention_scaling != y.attention_scaling || x.inv_freq != y.inv_freq ||
        x.axis_map.num_pairs != y.axis_map.num_pairs ||
        !std::equal(x.axis_map.axis, x.axis_map.axis + x.axis_map.num_pairs, y.axis_map.axis) ||
        x.axis_map.split_halves != y.axis_map.split_halves ||
        !std::equal(x.axis_map.second_axis, x.axis_map.second_axis + x.axis_map.num_pairs,
                    y.axis_map.second_axis)) {
      return false;
    }
  }
  return true;
}

// The first of the rope overrides `names` whose value differs from the preset's (or that the
// preset lacks) but without which (back at the preset's value) `rope` builds the same rotary
// embedding as `spec`'s; nullopt when every one takes effect. A rope the reader refuses without
// the key means the key is needed.
absl::StatusOr<std::optional<std::string>> IneffectiveRopeKey(
    const ModelSpec& spec, const Value& preset_rope, const Value& rope,
    const std::vector<std::string>& names, absl::string_view what) {
  const auto& preset_fields = preset_rope.struct_value().fields();
  for (const std::string& name : names) {
    const auto preset_value = preset_fields.find(name);
    const bool in_preset = preset_value != preset_fields.end();
    Value without = rope;
    auto& fields = *without.mutable_struct_value()->mutable_fields();
    if (in_preset && MessageDifferencer::Equals(fields.at(name), preset_value->second)) continue;
    if (in_preset) {
      fields[name] = preset_value->second;
    } else {
      fields.erase(name);
    }
    const absl::StatusOr<RopeParameters> other =
        RopeFromConfigObject(spec.positions, without, what);
    if (!other.ok()) continue;
    MROPE_ASSIGN_OR_RETURN(const bool same, SameRotary(*spec.rope, *other, RotaryLayoutOf(spec)));
    if (same) return name;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> PresetPositionKeys(absl::string_view preset) {
  MROPE_ASSIGN_OR_RETURN(const ModelSpec spec, PresetModelSpec(preset));
  std::vector<std::string> names;
  for (const OverrideKey& key : OverrideKeys(spec.positions)) {
    if (key.set_position != nullptr) names.push_back(key.name);
  }
  return names;
}

absl::StatusOr<ModelSpec> PresetModelSpecWithOverrides(absl::string_view preset,
                                                       const Value& overrides,
                                                       absl::string_view what) {
  MROPE_ASSIGN_OR_RETURN(ModelSpec spec, PresetModelSpec(preset));
  if (overrides.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expected a JSON object of the preset's keys"));
  }
  const std::vector<OverrideKey> keys = OverrideKeys(spec.positions);
  const auto& fields = overrides.struct_value().fields();
  std::vector<std::string> names;
  for (const auto& field : fields) names.push_back(field.first);
  std::sort(names.begin(), names.end());  // the first bad key, whatever the map's order

  const Value preset_rope = PresetRopeObject(spec.positions);
  Value rope = preset_rope;
  auto& rope_fields = *rope.mutable_struct_value()->mutable_fields();
  std::vector<std::string> rope_names;
  for (const std::string& name : names) {
    const Value& value = fields.at(name);
    const std::string path = absl::StrCat(what, ".", name);
    const auto key = std::find_if(keys.begin(), keys.end(),
                                  [&](const OverrideKey& k) { return k.name == name; });
    if (key == keys.end()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": unknown key '", name, "' for preset ",
                                                     preset, "; its keys are ", KeyList(keys)));
    }
    if (value.kind_case() == Value::kNullValue) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": expected a value, got null"));
    }
    if (key->set_position) {
      MROPE_RETURN_IF_ERROR(key->set_position(value, path, spec.positions));
    } else {
      rope_fields[name] = value;
      rope_names.push_back(name);
    }
  }
  MROPE_RETURN_IF_ERROR(Prefixed(ValidateModelConfig(spec.positions), what));
  if (rope_names.empty()) return spec;
  if (!spec.layer_types.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ".", rope_names.front(), ": ", preset,
        "'s rotary is per layer type; give its config.json to change it"));
  }
  // As in config.json, head_dim comes first: derive it when only its inputs are given.
  if (fields.count("head_dim") == 0 &&
      (fields.count("hidden_size") > 0 || fields.count("num_attention_heads") > 0)) {
    rope_fields.erase("head_dim");
  }
  MROPE_ASSIGN_OR_RETURN(spec.rope, RopeFromConfigObject(spec.positions, rope, what));
  if (spec.positions.rules->policy.scheme == PositionScheme::kSequentialGrid) {
    // HunYuan-VL: one position axis per section, as its get_rope_index counts them.
    spec.positions.num_axes = static_cast<int32_t>(spec.rope->mrope_section.size());
    MROPE_RETURN_IF_ERROR(Prefixed(ValidateModelConfig(spec.positions), what));
  }
  if (const Value* interleaved = FindField(overrides, "mrope_interleaved");
      interleaved != nullptr &&
      interleaved->bool_value() !=
          (spec.rope->mrope_layout == FamilyOf(spec.positions).rope.interleaved_layout)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ".mrope_interleaved: ", FamilyOf(spec.positions).name,
        "'s rotary code decides the layout (", MropeLayoutName(spec.rope->mrope_layout),
        "), got ", interleaved->bool_value() ? "true" : "false"));
  }
  MROPE_ASSIGN_OR_RETURN(const std::optional<std::string> ineffective,
                         IneffectiveRopeKey(spec, preset_rope, rope, rope_names, what));
  if (ineffective.has_value()) {
    const bool head_dim_first =
        (*ineffective == "hidden_size" || *ineffective == "num_attention_heads") &&
        rope_fields.count("head_dim") > 0;
    return absl::InvalidArgumentError(absl::StrCat(
        what, ".", *ineffective, ": has no effect on ", preset, " (",
        head_dim_first ? "head_dim is given and comes first"
                       : absl::StrCat("rope_type '", RopeTypeName(spec.rope->scaling.type),
                                      "' builds the same rotary embedding without it"),
        "); its keys are ", KeyList(keys)));
  }
  return spec;
}

absl::StatusOr<ModelSpec> PresetModelSpecWithOverrides(absl::string_view preset,
                                                       absl::string_view overrides_json) {
  MROPE_ASSIGN_OR_RETURN(const Value overrides, ParseJson(overrides_json));
  return PresetModelSpecWithOverrides(preset, overrides);
}

}  // namespace mrope
