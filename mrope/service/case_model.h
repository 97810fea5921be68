#ifndef MROPE_SERVICE_CASE_MODEL_H_
#define MROPE_SERVICE_CASE_MODEL_H_

// The model of a golden case file (tests/golden/README.md, "qwen-mrope-golden/v2"), which
// `mrope positions|explain --golden` serve. The case's prompt is a PositionRequest as it stands
// (mrope/service/request_io.h), so a case is "this model + this request".

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "mrope/service/model_spec.h"

namespace mrope {

// The preset `preset` with a case's flat `config` values applied: the family's token ids
// (`<name>_token_id`, as in its config.json), spatial_merge_size, temporal_merge_size (ERNIE),
// tokens_per_second,
// position_id_per_seconds, seconds_per_chunk and video_time_rounding ("scale_then_truncate" |
// "truncate_interval_first"). Other keys (the rotary ones, checkpoint) are not read. Errors
// name the key ("config.spatial_merge_size ...").
absl::StatusOr<ModelConfig> ModelConfigFromFlatJson(absl::string_view preset,
                                                    const google::protobuf::Value& config);

// The preset named by the case's `model` key, with the preset's rotary parameters and the
// case's `config` values (ModelConfigFromFlatJson). A vLLM request case (`convention`
// vllm_mm_features or vllm_evs) names its folder, and its model is the family's vLLM preset
// ("qwen3_vl_vllm_evs" -> "qwen3_vl_vllm").
absl::StatusOr<ModelSpec> ModelSpecFromCase(const google::protobuf::Value& doc);

// The preset `preset` (with its rotary parameters) and `overrides_json`, a JSON object of the
// flat `config` values ModelConfigFromFlatJson reads: what Python's
// Model.from_config(preset, overrides) and the C ABI's mrope_model_with_overrides build.
absl::StatusOr<ModelSpec> PresetModelSpecWithOverrides(absl::string_view preset,
                                                       absl::string_view overrides_json);

}  // namespace mrope

#endif  // MROPE_SERVICE_CASE_MODEL_H_
