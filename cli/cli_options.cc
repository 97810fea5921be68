#include "cli/cli_options.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "mrope/common/json.h"
#include "mrope/common/json_reader.h"
#include "mrope/common/status_macros.h"
#include "mrope/model/conventions.h"
#include "mrope/model/model_family.h"
#include "mrope/service/case_model.h"
#include "mrope/service/request_io.h"

namespace mrope {

absl::StatusOr<ModelSpec> LoadCliModel(const CliOptions& options) {
  if (options.config.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--config is required: a preset (", absl::StrJoin(PresetNames(), ", "),
                     ") or a model's config.json"));
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
  if (!options.convention.empty()) {
    auto convention = ResolveConvention(FamilyOf(config).family, options.convention);
    if (!convention.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--convention: ", convention.status().message()));
    }
    config.convention = *convention;
    // A release is reproduced with its own video time (unless --video_time_rounding says).
    if (absl::StrContains(options.convention, "==") && options.video_time_rounding.empty()) {
      config.video_time_rounding = ConventionRulesOf(*convention).reference_video_time;
    }
  }
  MROPE_RETURN_IF_ERROR(ValidateModelConfig(config));
  if (!options.layer_type.empty()) {
    auto picked = ModelSpecForLayerType(spec, options.layer_type);
    if (!picked.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--", picked.status().message()));
    }
    return picked;
  }
  return spec;
}

absl::StatusOr<GoldenInput> LoadGoldenInput(const CliOptions& options) {
  if (!options.config.empty() || !options.request.empty()) {
    return absl::InvalidArgumentError(
        "--golden takes the model and the prompt from the case; drop --config and --request");
  }
  const std::string& path = options.golden;
  MROPE_ASSIGN_OR_RETURN(const std::string text, ReadFileToString(path));
  MROPE_ASSIGN_OR_RETURN(const google::protobuf::Value doc, ParseJson(text));
  GoldenInput input;
  auto model = ModelSpecFromCase(doc);
  if (!model.ok()) {
    return absl::Status(model.status().code(), absl::StrCat(path, ": ", model.status().message()));
  }
  input.model = *std::move(model);
  auto request = PositionRequestFromJson(text);
  if (!request.ok()) {
    return absl::Status(request.status().code(),
                        absl::StrCat(path, ": ", request.status().message()));
  }
  input.request = *std::move(request);
  return input;
}

absl::StatusOr<v1::PositionRequest> LoadCliRequest(const CliOptions& options) {
  if (options.request.empty()) {
    return absl::InvalidArgumentError(
        "--request is required: a JSON or textproto request file, or - for stdin");
  }
  return ReadPositionRequest(options.request);
}

}  // namespace mrope
