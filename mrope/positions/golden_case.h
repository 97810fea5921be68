#ifndef MROPE_POSITIONS_GOLDEN_CASE_H_
#define MROPE_POSITIONS_GOLDEN_CASE_H_

// The golden-file format (tests/golden/README.md, "qwen-mrope-golden/v2") as an input format:
// a case's `model`, `config` and `inputs` become a ModelConfig and a PromptBatch, and a batch's
// positions become the case's `outputs` JSON. `mrope positions --golden` is built on this.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/model_config.h"

namespace mrope {

struct PositionCase {
  std::string model;  // the golden model key, e.g. "qwen2_5_vl_vllm"
  ModelConfig config;
  PromptBatch batch;
};

// Model key -> preset, then the optional flat fields of `config` override it: the *_token_id
// ids, spatial_merge_size, tokens_per_second, position_id_per_seconds, seconds_per_chunk and
// video_time_rounding ("scale_then_truncate" | "truncate_interval_first").
absl::StatusOr<ModelConfig> ModelConfigFromFlatJson(absl::string_view model,
                                                    const google::protobuf::Value& config);

// Reads the golden `inputs` object (input_ids, attention_mask, image_grid_thw, video_grid_thw,
// second_per_grid_ts, video_second_per_grid, audio_feature_lengths, use_audio_in_video).
absl::StatusOr<PromptBatch> PromptBatchFromJson(const google::protobuf::Value& inputs);

// A whole case document (its `outputs` may be absent).
absl::StatusOr<PositionCase> PositionCaseFromJson(const google::protobuf::Value& doc);

// Positions of the batch as the golden `outputs` object: position_ids [3][B][L],
// mrope_position_deltas [B], decode_position_ids [3][B][3], and for Omni rope_deltas_thinker
// [B]. Integers for integer families, float32 numbers for Qwen3-Omni.
absl::StatusOr<std::string> PositionsOutputJson(const ModelConfig& config,
                                                const PromptBatch& batch);

}  // namespace mrope

#endif  // MROPE_POSITIONS_GOLDEN_CASE_H_
