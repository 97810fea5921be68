#include "mrope/cli/cli_options.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mrope/common/json.h"
#include "mrope/common/status_macros.h"
#include "mrope/positions/golden_case.h"
#include "mrope/service/request_io.h"

namespace mrope {

absl::StatusOr<ModelSpec> LoadCliModel(const CliOptions& options) {
  if (options.config.empty()) {
    return absl::InvalidArgumentError(
        "--config is required: a preset (qwen2_vl, qwen2_5_vl, qwen2_5_vl_hf, qwen2_5_vl_vllm, "
        "qwen3_vl, qwen2_5_omni, qwen3_omni) or a model's config.json");
  }
  MROPE_ASSIGN_OR_RETURN(ModelSpec spec, LoadModelSpec(options.config));
  ModelConfig& config = spec.positions;
  if (options.video_time_rounding == "scale_then_truncate") {
    config.video_time_rounding = VideoTimeRounding::kScaleThenTruncate;
  } else if (options.video_time_rounding == "truncate_interval_first") {
    config.video_time_rounding = VideoTimeRounding::kTruncateIntervalFirst;
  } else if (!options.video_time_rounding.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--video_time_rounding must be scale_then_truncate or truncate_interval_first, got '",
        options.video_time_rounding, "'"));
  }
  if (options.convention == "hf") {
    config.convention = Convention::kHfTransformers;
  } else if (options.convention == "vllm") {
    config.convention = Convention::kVllm;
  } else if (!options.convention.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--convention must be hf or vllm, got '", options.convention, "'"));
  }
  MROPE_RETURN_IF_ERROR(ValidateModelConfig(config));
  return spec;
}

absl::StatusOr<GoldenInput> LoadGoldenInput(const std::string& path) {
  MROPE_ASSIGN_OR_RETURN(const google::protobuf::Value doc, ReadJsonFile(path));
  auto parsed = PositionCaseFromJson(doc);
  if (!parsed.ok()) {
    return absl::Status(parsed.status().code(),
                        absl::StrCat(path, ": ", parsed.status().message()));
  }
  GoldenInput input;
  // The preset's rotary parameters with the case's position parameters.
  MROPE_ASSIGN_OR_RETURN(input.model, PresetModelSpec(parsed->model));
  input.model.positions = parsed->config;
  input.batch = std::move(parsed->batch);
  return input;
}

absl::StatusOr<PositionRequest> LoadCliRequest(const CliOptions& options) {
  if (options.request.empty()) {
    return absl::InvalidArgumentError(
        "--request is required: a JSON or textproto request file, or - for stdin");
  }
  return ReadPositionRequest(options.request);
}

}  // namespace mrope
