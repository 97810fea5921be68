#include "mrope/service/case_model.h"

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "mrope/common/json.h"
#include "mrope/common/status_macros.h"
#include "mrope/model/model_family.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;

absl::Status ReadOptionalInt(const Value& object, absl::string_view key, int64_t& out) {
  if (const Value* v = FindField(object, key)) {
    MROPE_ASSIGN_OR_RETURN(out, AsInt64(*v, absl::StrCat("config.", key)));
  }
  return absl::OkStatus();
}

absl::Status ReadOptionalDouble(const Value& object, absl::string_view key, double& out) {
  if (const Value* v = FindField(object, key)) {
    MROPE_ASSIGN_OR_RETURN(out, AsDouble(*v, absl::StrCat("config.", key)));
  }
  return absl::OkStatus();
}

// A merge size, in [1, 64] before it is narrowed to int32.
absl::Status ReadMergeSize(const Value& object, absl::string_view key, int32_t& out) {
  int64_t merge = out;
  MROPE_RETURN_IF_ERROR(ReadOptionalInt(object, key, merge));
  if (merge < 1 || merge > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("config.", key, " must be in [1, 64], got ", merge));
  }
  out = static_cast<int32_t>(merge);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ModelConfig> ModelConfigFromFlatJson(absl::string_view preset,
                                                    const Value& config) {
  MROPE_ASSIGN_OR_RETURN(ModelConfig out, PresetConfig(preset));
  for (const TokenKey& key : out.rules->token_keys) {
    MROPE_RETURN_IF_ERROR(
        ReadOptionalInt(config, absl::StrCat(key.hf_name, "_token_id"), out.tokens.*key.field));
  }
  MROPE_RETURN_IF_ERROR(ReadMergeSize(config, "spatial_merge_size", out.spatial_merge_size));
  MROPE_RETURN_IF_ERROR(ReadMergeSize(config, "temporal_merge_size", out.temporal_merge_size));
  MROPE_RETURN_IF_ERROR(ReadOptionalDouble(config, "tokens_per_second", out.tokens_per_second));
  MROPE_RETURN_IF_ERROR(
      ReadOptionalDouble(config, "position_id_per_seconds", out.position_id_per_seconds));
  MROPE_RETURN_IF_ERROR(ReadOptionalDouble(config, "seconds_per_chunk", out.seconds_per_chunk));
  if (const Value* v = FindField(config, "video_time_rounding")) {
    MROPE_ASSIGN_OR_RETURN(std::string rounding, AsString(*v, "config.video_time_rounding"));
    if (rounding == "scale_then_truncate") {
      out.video_time_rounding = VideoTimeRounding::kScaleThenTruncate;
    } else if (rounding == "truncate_interval_first") {
      out.video_time_rounding = VideoTimeRounding::kTruncateIntervalFirst;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "config.video_time_rounding must be scale_then_truncate or truncate_interval_first, "
          "got '", rounding, "'"));
    }
  }
  MROPE_RETURN_IF_ERROR(ValidateModelConfig(out));
  return out;
}

absl::StatusOr<ModelSpec> ModelSpecFromCase(const Value& doc) {
  MROPE_ASSIGN_OR_RETURN(const Value* model, GetField(doc, "model", "case"));
  MROPE_ASSIGN_OR_RETURN(std::string name, AsString(*model, "model"));
  // A vLLM request case (convention vllm_mm_features or vllm_evs) names its folder; its model
  // is the family's vLLM preset ("qwen3_vl_vllm_evs" -> "qwen3_vl_vllm").
  if (const Value* convention = FindField(doc, "convention")) {
    MROPE_ASSIGN_OR_RETURN(const std::string value, AsString(*convention, "convention"));
    const std::string suffix = absl::StrCat("_", value);
    if (absl::StartsWith(value, "vllm_") && absl::EndsWith(name, suffix)) {
      name = absl::StrCat(name.substr(0, name.size() - suffix.size()), "_vllm");
    }
  }
  MROPE_ASSIGN_OR_RETURN(ModelSpec spec, PresetModelSpec(name));
  const Value* config = FindField(doc, "config");
  MROPE_ASSIGN_OR_RETURN(spec.positions,
                         ModelConfigFromFlatJson(name, config != nullptr ? *config : Value()));
  return spec;
}

absl::StatusOr<ModelSpec> PresetModelSpecWithOverrides(absl::string_view preset,
                                                       absl::string_view overrides_json) {
  MROPE_ASSIGN_OR_RETURN(ModelSpec spec, PresetModelSpec(preset));
  MROPE_ASSIGN_OR_RETURN(const Value overrides, ParseJson(overrides_json));
  MROPE_ASSIGN_OR_RETURN(spec.positions, ModelConfigFromFlatJson(preset, overrides));
  return spec;
}

}  // namespace mrope
