#include "mrope/rotary/rope_config.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "mrope/common/json.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/rope_scaling.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;

// Where a key is looked up: the rope object (rope_parameters or rope_scaling; the config itself
// when it has none), the config's top level, or the rope object first and then the top level.
enum class Scope { kRopeObjectFirst, kRopeObject, kTopLevel };

// Looks keys up in the rope object and at the config's top level.
class RopeKeys {
 public:
  static absl::StatusOr<RopeKeys> Locate(const Value& config) {
    if (config.kind_case() != Value::kStructValue) {
      return absl::InvalidArgumentError("rope config: expected a JSON object");
    }
    for (absl::string_view name : {"rope_parameters", "rope_scaling"}) {
      const Value* nested = FindField(config, name);
      if (nested == nullptr) continue;
      if (nested->kind_case() != Value::kStructValue) {
        return absl::InvalidArgumentError(absl::StrCat(name, ": expected an object"));
      }
      return RopeKeys(config, nested, absl::StrCat(name, "."));
    }
    return RopeKeys(config, &config, "");
  }

  // The value of `key` in `scope` (nullptr if absent) and its path for messages.
  const Value* Find(absl::string_view key, std::string* path,
                    Scope scope = Scope::kRopeObjectFirst) const {
    if (scope != Scope::kTopLevel) {
      if (const Value* v = FindField(*nested_, key); v != nullptr) {
        *path = absl::StrCat(prefix_, key);
        return v;
      }
      if (scope == Scope::kRopeObject) return nullptr;
    }
    *path = std::string(key);
    return FindField(*config_, key);
  }

  // Path prefix of keys in the rope object: "rope_scaling.", "rope_parameters." or "".
  const std::string& prefix() const { return prefix_; }

 private:
  RopeKeys(const Value& config, const Value* nested, std::string prefix)
      : config_(&config), nested_(nested), prefix_(std::move(prefix)) {}

  const Value* config_;
  const Value* nested_;
  std::string prefix_;
};

template <typename T, typename Reader>
absl::StatusOr<std::optional<T>> ReadOptional(const RopeKeys& keys, absl::string_view key,
                                              Reader read, Scope scope = Scope::kRopeObjectFirst) {
  std::string path;
  const Value* value = keys.Find(key, &path, scope);
  if (value == nullptr) return std::optional<T>();
  MROPE_ASSIGN_OR_RETURN(T result, read(*value, path));
  return std::optional<T>(std::move(result));
}

absl::StatusOr<std::optional<double>> ReadDouble(const RopeKeys& keys, absl::string_view key) {
  return ReadOptional<double>(keys, key, AsDouble);
}
absl::StatusOr<std::optional<int64_t>> ReadInt64(const RopeKeys& keys, absl::string_view key,
                                                 Scope scope = Scope::kRopeObjectFirst) {
  return ReadOptional<int64_t>(keys, key, AsInt64, scope);
}
absl::StatusOr<std::optional<bool>> ReadBool(const RopeKeys& keys, absl::string_view key) {
  return ReadOptional<bool>(keys, key, AsBool);
}
absl::StatusOr<std::optional<std::vector<float>>> ReadFloats(const RopeKeys& keys,
                                                             absl::string_view key) {
  return ReadOptional<std::vector<float>>(
      keys, key, [](const Value& v, absl::string_view path) { return AsFloatArray(v, path); });
}

absl::Status Missing(const RopeKeys& keys, absl::string_view key, RopeType type) {
  return absl::InvalidArgumentError(
      absl::StrCat(keys.prefix(), key, " is required for rope_type '", RopeTypeName(type), "'"));
}

template <typename T>
absl::StatusOr<T> Require(const absl::StatusOr<std::optional<T>>& read, const RopeKeys& keys,
                          absl::string_view key, RopeType type) {
  if (!read.ok()) return read.status();
  if (!read->has_value()) return Missing(keys, key, type);
  return **read;
}

absl::StatusOr<RopeType> ReadRopeType(const RopeKeys& keys) {
  for (absl::string_view key : {"rope_type", "type"}) {
    std::string path;
    const Value* value = keys.Find(key, &path);
    if (value == nullptr) continue;
    MROPE_ASSIGN_OR_RETURN(std::string name, AsString(*value, path));
    absl::StatusOr<RopeType> type = RopeTypeFromName(name);
    if (!type.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", type.status().message()));
    }
    return type;
  }
  return RopeType::kDefault;
}

absl::StatusOr<int32_t> ReadHeadDim(const RopeKeys& keys, int32_t default_head_dim) {
  MROPE_ASSIGN_OR_RETURN(std::optional<int64_t> head_dim, ReadInt64(keys, "head_dim"));
  if (!head_dim.has_value() && default_head_dim > 0) head_dim = default_head_dim;
  if (!head_dim.has_value()) {
    MROPE_ASSIGN_OR_RETURN(std::optional<int64_t> hidden, ReadInt64(keys, "hidden_size"));
    MROPE_ASSIGN_OR_RETURN(std::optional<int64_t> heads, ReadInt64(keys, "num_attention_heads"));
    if (!hidden.has_value() || !heads.has_value()) {
      return absl::InvalidArgumentError(
          "missing required field 'head_dim' (or hidden_size and num_attention_heads)");
    }
    if (*heads <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_attention_heads must be > 0, got ", *heads));
    }
    head_dim = *hidden / *heads;
  }
  if (*head_dim < 1 || *head_dim > kMaxHeadDim) {
    return absl::InvalidArgumentError(
        absl::StrCat("head_dim must be in [1, ", kMaxHeadDim, "], got ", *head_dim));
  }
  return static_cast<int32_t>(*head_dim);
}

absl::StatusOr<int32_t> ReadRotaryDim(const RopeKeys& keys, int32_t head_dim) {
  std::string path;
  const Value* value = keys.Find("partial_rotary_factor", &path);
  if (value == nullptr) return head_dim;
  MROPE_ASSIGN_OR_RETURN(double factor, AsDouble(*value, path));
  if (!(factor > 0.0 && factor <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " must be in (0, 1], got ", factor));
  }
  return static_cast<int32_t>(head_dim * factor);  // HF: int(head_dim * partial_rotary_factor)
}

// The model's max_position_embeddings (top level), required by `type`.
absl::StatusOr<int64_t> ReadMaxPositions(const RopeKeys& keys, RopeType type) {
  MROPE_ASSIGN_OR_RETURN(std::optional<int64_t> max_pos,
                         ReadInt64(keys, "max_position_embeddings", Scope::kTopLevel));
  if (!max_pos.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_position_embeddings is required for rope_type '", RopeTypeName(type), "'"));
  }
  if (*max_pos <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_position_embeddings must be > 0, got ", *max_pos));
  }
  return *max_pos;
}

absl::StatusOr<double> ReadNonNegative(const RopeKeys& keys, absl::string_view key) {
  std::string path;
  const Value* value = keys.Find(key, &path);
  if (value == nullptr) return 0.0;
  MROPE_ASSIGN_OR_RETURN(double x, AsDouble(*value, path));
  if (!std::isfinite(x) || x < 0.0) {
    return absl::InvalidArgumentError(absl::StrCat(path, " must be a finite number >= 0, got ", x));
  }
  return x;
}

absl::Status ReadYarn(const RopeKeys& keys, RopeParameters& p) {
  RopeScaling& s = p.scaling;
  MROPE_ASSIGN_OR_RETURN(s.factor, Require(ReadDouble(keys, "factor"), keys, "factor", s.type));
  // HF v4.57.6: the rope object's original_max_position_embeddings or max_position_embeddings;
  // the factor stays rope_scaling.factor even where it differs from their ratio.
  MROPE_ASSIGN_OR_RETURN(std::optional<int64_t> original,
                         ReadInt64(keys, "original_max_position_embeddings", Scope::kRopeObject));
  if (original.has_value()) {
    s.original_max_position_embeddings = *original;
  } else {
    MROPE_ASSIGN_OR_RETURN(s.original_max_position_embeddings, ReadMaxPositions(keys, s.type));
  }
  MROPE_ASSIGN_OR_RETURN(std::optional<double> beta_fast, ReadDouble(keys, "beta_fast"));
  MROPE_ASSIGN_OR_RETURN(std::optional<double> beta_slow, ReadDouble(keys, "beta_slow"));
  MROPE_ASSIGN_OR_RETURN(std::optional<bool> truncate, ReadBool(keys, "truncate"));
  s.beta_fast = beta_fast.value_or(32.0);
  s.beta_slow = beta_slow.value_or(1.0);
  s.truncate = truncate.value_or(true);
  MROPE_ASSIGN_OR_RETURN(std::optional<double> attention, ReadDouble(keys, "attention_factor"));
  MROPE_ASSIGN_OR_RETURN(double mscale, ReadNonNegative(keys, "mscale"));
  MROPE_ASSIGN_OR_RETURN(double mscale_all_dim, ReadNonNegative(keys, "mscale_all_dim"));
  p.attention_scaling =
      static_cast<float>(attention.value_or(YarnAttentionFactor(s.factor, mscale, mscale_all_dim)));
  return absl::OkStatus();
}

absl::Status ReadLlama3(const RopeKeys& keys, RopeParameters& p) {
  RopeScaling& s = p.scaling;
  MROPE_ASSIGN_OR_RETURN(s.factor, Require(ReadDouble(keys, "factor"), keys, "factor", s.type));
  MROPE_ASSIGN_OR_RETURN(s.low_freq_factor, Require(ReadDouble(keys, "low_freq_factor"), keys,
                                                    "low_freq_factor", s.type));
  MROPE_ASSIGN_OR_RETURN(s.high_freq_factor, Require(ReadDouble(keys, "high_freq_factor"), keys,
                                                     "high_freq_factor", s.type));
  MROPE_ASSIGN_OR_RETURN(
      s.original_max_position_embeddings,
      Require(ReadInt64(keys, "original_max_position_embeddings", Scope::kRopeObject), keys,
              "original_max_position_embeddings", s.type));
  return absl::OkStatus();
}

// HF v4.57.6 (Phi-3 convention): with a top-level original_max_position_embeddings, L0 is that
// and s = max_position_embeddings / L0, whatever rope_scaling.factor says; without it, L0 is
// max_position_embeddings and s is rope_scaling.factor.
absl::Status ReadLongRope(const RopeKeys& keys, RopeParameters& p) {
  RopeScaling& s = p.scaling;
  MROPE_ASSIGN_OR_RETURN(p.short_factor,
                         Require(ReadFloats(keys, "short_factor"), keys, "short_factor", s.type));
  MROPE_ASSIGN_OR_RETURN(p.long_factor,
                         Require(ReadFloats(keys, "long_factor"), keys, "long_factor", s.type));
  MROPE_ASSIGN_OR_RETURN(const int64_t max_pos, ReadMaxPositions(keys, s.type));
  MROPE_ASSIGN_OR_RETURN(std::optional<int64_t> original,
                         ReadInt64(keys, "original_max_position_embeddings", Scope::kTopLevel));
  MROPE_ASSIGN_OR_RETURN(std::optional<double> attention, ReadDouble(keys, "attention_factor"));
  if (original.has_value()) {
    if (*original <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("original_max_position_embeddings must be > 0, got ", *original));
    }
    s.original_max_position_embeddings = *original;
    s.factor = static_cast<double>(max_pos) / static_cast<double>(*original);
  } else {
    s.original_max_position_embeddings = max_pos;
    MROPE_ASSIGN_OR_RETURN(std::optional<double> factor, ReadDouble(keys, "factor"));
    if (!factor.has_value() && !attention.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(keys.prefix(),
                       "factor (or a top-level original_max_position_embeddings, or an "
                       "attention_factor) is required for rope_type 'longrope'"));
    }
    s.factor = factor.value_or(1.0);  // only the default attention factor reads it
  }
  p.attention_scaling = static_cast<float>(
      attention.value_or(LongRopeAttentionFactor(s.factor, s.original_max_position_embeddings)));
  return absl::OkStatus();
}

absl::Status ReadMethod(const RopeKeys& keys, RopeParameters& p) {
  RopeScaling& s = p.scaling;
  switch (s.type) {
    case RopeType::kDefault:
      return absl::OkStatus();
    case RopeType::kLinear:
    case RopeType::kNtk:
    case RopeType::kDynamic: {
      MROPE_ASSIGN_OR_RETURN(s.factor, Require(ReadDouble(keys, "factor"), keys, "factor", s.type));
      if (s.type == RopeType::kDynamic) {
        // HF v4.57.6 scales against max_position_embeddings, never an original length.
        MROPE_ASSIGN_OR_RETURN(s.original_max_position_embeddings, ReadMaxPositions(keys, s.type));
      }
      return absl::OkStatus();
    }
    case RopeType::kYarn:
      return ReadYarn(keys, p);
    case RopeType::kLlama3:
      return ReadLlama3(keys, p);
    case RopeType::kLongRope:
      return ReadLongRope(keys, p);
  }
  return absl::OkStatus();
}

absl::Status ReadMropeSections(const RopeKeys& keys, MropeLayout interleaved_layout,
                               RopeParameters& p) {
  std::string path;
  if (const Value* value = keys.Find("mrope_section", &path); value != nullptr) {
    MROPE_ASSIGN_OR_RETURN(std::vector<int64_t> sections, AsInt64Array(*value, path));
    for (int64_t s : sections) {
      if (s < 0 || s > kMaxRotaryPairs) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, " entries must be in [0, ", kMaxRotaryPairs, "], got ", s));
      }
      p.mrope_section.push_back(static_cast<int32_t>(s));
    }
  }
  MROPE_ASSIGN_OR_RETURN(std::optional<bool> interleaved, ReadBool(keys, "mrope_interleaved"));
  if (interleaved.value_or(false)) p.mrope_layout = interleaved_layout;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RopeParameters> ParseRopeParameters(const Value& config,
                                                   const RopeConfigRules& rules) {
  MROPE_ASSIGN_OR_RETURN(RopeKeys keys, RopeKeys::Locate(config));
  RopeParameters p;
  MROPE_ASSIGN_OR_RETURN(p.scaling.type, ReadRopeType(keys));
  MROPE_ASSIGN_OR_RETURN(p.head_dim, ReadHeadDim(keys, rules.default_head_dim));
  MROPE_ASSIGN_OR_RETURN(p.scaling.rotary_dim, ReadRotaryDim(keys, p.head_dim));
  std::string theta_path;
  const Value* theta = keys.Find("rope_theta", &theta_path);
  if (theta == nullptr) return absl::InvalidArgumentError("missing required field 'rope_theta'");
  MROPE_ASSIGN_OR_RETURN(p.scaling.theta, AsDouble(*theta, theta_path));
  MROPE_RETURN_IF_ERROR(ReadMethod(keys, p));
  MROPE_RETURN_IF_ERROR(ReadMropeSections(keys, rules.interleaved_layout, p));
  if (rules.layout.has_value()) p.mrope_layout = *rules.layout;
  MROPE_RETURN_IF_ERROR(ValidateRopeParameters(p, keys.prefix()));
  return p;
}

}  // namespace mrope
