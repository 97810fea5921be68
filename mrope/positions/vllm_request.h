#ifndef MROPE_POSITIONS_VLLM_REQUEST_H_
#define MROPE_POSITIONS_VLLM_REQUEST_H_

// vLLM's per-request call, get_mrope_input_positions(input_tokens, mm_features): one unpadded
// prompt and, per multimodal item, its modality, its placeholder range in the prompt and its
// processed grid (vLLM's MultiModalFeatureSpec: modality, mm_position.offset/length,
// data.image_grid_thw / video_grid_thw / second_per_grid_ts). Positions follow vLLM
// (tests/golden/README.md, "vLLM get_mrope_input_positions(input_tokens, mm_features) rules"):
// items are taken in order of offset, text between them continues at the previous maximum + 1,
// and each item's grid starts where its placeholder's media tokens start.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mrope/positions/limits.h"
#include "mrope/positions/model_config.h"
#include "mrope/positions/span.h"

namespace mrope {

enum class Modality { kImage, kVideo };

// One item of mm_features.
struct MultiModalFeature {
  Modality modality = Modality::kImage;
  int64_t offset = 0;  // mm_position.offset: the placeholder's first token
  int64_t length = 0;  // mm_position.length
  Grid grid;           // image_grid_thw or video_grid_thw
  // Qwen2.5-VL videos: data.second_per_grid_ts as given (vLLM reads the processor's float32
  // with .item(); absent: 1.0).
  double second_per_grid = 1.0;
};

// A request. It borrows input_tokens, which the caller keeps alive while it is in use.
struct VllmRequest {
  absl::Span<const int64_t> input_tokens;
  std::vector<MultiModalFeature> features;  // any order: vLLM sorts them by offset
};

// The features in vLLM's order (by offset, stable), each checked: offset and length inside
// the prompt and not overlapping the previous item, the grid within `limits` (t, h, w >= 1, h
// and w divisible by spatial_merge_size), images of t == 1 (vLLM asserts it). Errors name the
// feature by its index in `request.features`.
absl::StatusOr<std::vector<const MultiModalFeature*>> SortedFeatures(
    const ModelConfig& config, const VllmRequest& request, const PositionLimits& limits);

// The request as spans whose media tokens are the placeholders' and whose every other token is
// text (block markers and Qwen3-VL's timestamps included), for SequencePositions under
// Convention::kVllm. Each placeholder must hold exactly its grid's tokens: an image's range h'w'
// image tokens, a Qwen2.5-VL video's t h'w' video tokens; a Qwen3-VL video's range (from its
// first timestamp, or from after the outer <vision_start> with transformers >= 5.10's
// processors) t frames, each text, <vision_start>, h'w' video tokens, <vision_end>. A prompt
// laid out otherwise (EVS-pruned videos: mrope/positions/vllm_evs.h) is refused, naming the
// feature, the token index and what was found.
absl::StatusOr<std::vector<Span>> VllmRequestSpans(const ModelConfig& config,
                                                   const VllmRequest& request,
                                                   const PositionLimits& limits = {});

}  // namespace mrope

#endif  // MROPE_POSITIONS_VLLM_REQUEST_H_
