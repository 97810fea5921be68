#include "mrope/positions/golden_case.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mrope/common/json.h"
#include "mrope/common/json_writer.h"
#include "mrope/common/status_macros.h"
#include "mrope/positions/model_family.h"

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

absl::StatusOr<std::vector<Grid>> ReadGrids(const Value& inputs, absl::string_view key) {
  std::vector<Grid> grids;
  const Value* v = FindField(inputs, key);
  if (v == nullptr) return grids;
  const std::string path = absl::StrCat("inputs.", key);
  std::vector<int64_t> shape;
  MROPE_ASSIGN_OR_RETURN(std::vector<int64_t> flat, AsInt64Array(*v, path, &shape));
  if (flat.empty()) return grids;
  if (shape.size() != 2 || shape[1] != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " must be a list of [t, h, w] triples"));
  }
  for (size_t i = 0; i < flat.size(); i += 3) grids.push_back({flat[i], flat[i + 1], flat[i + 2]});
  return grids;
}

absl::StatusOr<std::vector<float>> ReadSeconds(const Value& inputs, absl::string_view key) {
  const Value* v = FindField(inputs, key);
  if (v == nullptr) return std::vector<float>();
  std::vector<int64_t> shape;
  MROPE_ASSIGN_OR_RETURN(std::vector<float> values,
                         AsFloatArray(*v, absl::StrCat("inputs.", key), &shape));
  if (shape.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("inputs.", key, " must be a flat list"));
  }
  return values;
}

}  // namespace

absl::StatusOr<ModelConfig> ModelConfigFromFlatJson(absl::string_view model,
                                                    const Value& config) {
  MROPE_ASSIGN_OR_RETURN(ModelConfig out, PresetConfig(model));
  for (const TokenKey& key : FamilyInfo(out.family).token_keys) {
    MROPE_RETURN_IF_ERROR(
        ReadOptionalInt(config, absl::StrCat(key.hf_name, "_token_id"), out.tokens.*key.field));
  }
  int64_t merge = out.spatial_merge_size;
  MROPE_RETURN_IF_ERROR(ReadOptionalInt(config, "spatial_merge_size", merge));
  if (merge < 1 || merge > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("config.spatial_merge_size must be in [1, 64], got ", merge));
  }
  out.spatial_merge_size = static_cast<int32_t>(merge);
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

absl::StatusOr<PromptBatch> PromptBatchFromJson(const Value& inputs) {
  PromptBatch batch;
  MROPE_ASSIGN_OR_RETURN(const Value* ids, GetField(inputs, "input_ids", "inputs"));
  std::vector<int64_t> shape;
  MROPE_ASSIGN_OR_RETURN(batch.input_ids, AsInt64Array(*ids, "inputs.input_ids", &shape));
  if (shape.size() != 2 || shape[0] < 1 || shape[1] < 1) {
    return absl::InvalidArgumentError("inputs.input_ids must be a non-empty [B][L] array");
  }
  batch.batch_size = shape[0];
  batch.seq_len = shape[1];
  if (const Value* mask = FindField(inputs, "attention_mask")) {
    std::vector<int64_t> mask_shape;
    MROPE_ASSIGN_OR_RETURN(batch.attention_mask,
                           AsInt64Array(*mask, "inputs.attention_mask", &mask_shape));
    if (mask_shape != shape) {
      return absl::InvalidArgumentError(
          absl::StrCat("inputs.attention_mask must have the shape of input_ids [", shape[0],
                       "][", shape[1], "]"));
    }
  }
  MediaInputs& media = batch.media;
  MROPE_ASSIGN_OR_RETURN(media.image_grid_thw, ReadGrids(inputs, "image_grid_thw"));
  MROPE_ASSIGN_OR_RETURN(media.video_grid_thw, ReadGrids(inputs, "video_grid_thw"));
  MROPE_ASSIGN_OR_RETURN(media.second_per_grid_ts, ReadSeconds(inputs, "second_per_grid_ts"));
  MROPE_ASSIGN_OR_RETURN(media.video_second_per_grid,
                         ReadSeconds(inputs, "video_second_per_grid"));
  if (const Value* v = FindField(inputs, "audio_feature_lengths")) {
    std::vector<int64_t> audio_shape;
    MROPE_ASSIGN_OR_RETURN(media.audio_feature_lengths,
                           AsInt64Array(*v, "inputs.audio_feature_lengths", &audio_shape));
    if (audio_shape.size() > 1) {
      return absl::InvalidArgumentError("inputs.audio_feature_lengths must be a flat list");
    }
  }
  if (const Value* v = FindField(inputs, "use_audio_in_video")) {
    MROPE_ASSIGN_OR_RETURN(media.use_audio_in_video, AsBool(*v, "inputs.use_audio_in_video"));
  }
  return batch;
}

absl::StatusOr<PositionCase> PositionCaseFromJson(const Value& doc) {
  PositionCase out;
  MROPE_ASSIGN_OR_RETURN(const Value* model, GetField(doc, "model", "case"));
  MROPE_ASSIGN_OR_RETURN(out.model, AsString(*model, "model"));
  const Value* config = FindField(doc, "config");
  MROPE_ASSIGN_OR_RETURN(out.config,
                         ModelConfigFromFlatJson(out.model, config ? *config : Value()));
  MROPE_ASSIGN_OR_RETURN(const Value* inputs, GetField(doc, "inputs", "case"));
  MROPE_ASSIGN_OR_RETURN(out.batch, PromptBatchFromJson(*inputs));
  return out;
}

namespace {

template <typename Out>
absl::StatusOr<std::string> OutputJson(const BatchPlan& plan, bool omni) {
  constexpr int64_t kDecodeSteps = 3;
  const int64_t b = plan.batch_size;
  std::vector<Out> positions;
  MROPE_RETURN_IF_ERROR(FillBatch(plan, positions));
  std::vector<Out> decode;
  MROPE_RETURN_IF_ERROR(FillDecode(plan, kDecodeSteps, decode));
  std::vector<Out> deltas(plan.deltas.begin(), plan.deltas.end());
  std::vector<Out> thinker(plan.decode_deltas.begin(), plan.decode_deltas.end());
  std::string out = "{";
  AppendJsonKey("position_ids", out);
  AppendJsonArray<Out>(positions, {3, b, plan.seq_len}, out);
  out += ",";
  AppendJsonKey("mrope_position_deltas", out);
  AppendJsonArray<Out>(deltas, {b}, out);
  if (omni) {
    out += ",";
    AppendJsonKey("rope_deltas_thinker", out);
    AppendJsonArray<Out>(thinker, {b}, out);
  }
  out += ",";
  AppendJsonKey("decode_position_ids", out);
  AppendJsonArray<Out>(decode, {3, b, kDecodeSteps}, out);
  out += "}";
  return out;
}

}  // namespace

absl::StatusOr<std::string> PositionsOutputJson(const ModelConfig& config,
                                                const PromptBatch& batch) {
  MROPE_ASSIGN_OR_RETURN(const BatchPlan plan, PlanBatch(config, batch));
  const bool omni = PolicyFor(config).has_audio;
  if (plan.float_positions) return OutputJson<float>(plan, omni);
  return OutputJson<int64_t>(plan, omni);
}

}  // namespace mrope
