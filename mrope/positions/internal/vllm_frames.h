#ifndef MROPE_POSITIONS_INTERNAL_VLLM_FRAMES_H_
#define MROPE_POSITIONS_INTERNAL_VLLM_FRAMES_H_

// The frames of a Qwen3-VL video placeholder in a vLLM prompt, shared by the mm_features and
// the EVS positions (vllm_request.cc, vllm_evs.cc).

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mrope/positions/model_config.h"

namespace mrope {
namespace vllm_internal {

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
