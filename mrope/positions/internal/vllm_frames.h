#ifndef MROPE_POSITIONS_INTERNAL_VLLM_FRAMES_H_
#define MROPE_POSITIONS_INTERNAL_VLLM_FRAMES_H_

// What the mm_features and the EVS positions share (vllm_request.cc, vllm_evs.cc): their error
// messages, the check of a placeholder's tokens, and the frames of a Qwen3-VL video placeholder.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "mrope/positions/model_config.h"
#include "mrope/positions/vllm_request.h"

namespace mrope {
namespace vllm_internal {

const char* ModalityName(Modality modality);

// InvalidArgument "mm_features[<feature>] (<modality>): <what...>".
template <typename... What>
absl::Status FeatureError(size_t feature, const MultiModalFeature& f, What... what) {
  return absl::InvalidArgumentError(absl::StrCat("mm_features[", feature, "] (",
                                                 ModalityName(f.modality), "): ", what...));
}

// Tokens [begin, end) of feature `feature`'s placeholder must all be `id`.
absl::Status ExpectPlaceholderTokens(absl::Span<const int64_t> tokens, int64_t begin,
                                     int64_t end, int64_t id, size_t feature,
                                     const MultiModalFeature& f);

// One frame: text from `text_begin` (its timestamp), <vision_start> at `start`, `pads` video
// tokens from start + 1, <vision_end> at start + 1 + pads.
struct Frame {
  int64_t text_begin = 0;
  int64_t start = 0;
  int64_t pads = 0;
  int64_t End() const { return start + pads + 2; }  // one past the frame's <vision_end>
};

// Walks `frames` frames in tokens [begin, end): each is text without markers or media, then
// <vision_start>, video tokens, <vision_end>; the last frame's <vision_end> must be the range's
// last token. Errors name feature `feature`, the frame and the token index.
absl::StatusOr<std::vector<Frame>> WalkFrames(const SpecialTokens& ids,
                                              absl::Span<const int64_t> tokens, int64_t begin,
                                              int64_t end, int64_t frames, size_t feature);

}  // namespace vllm_internal
}  // namespace mrope

#endif  // MROPE_POSITIONS_INTERNAL_VLLM_FRAMES_H_
