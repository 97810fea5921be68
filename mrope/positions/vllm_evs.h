#ifndef MROPE_POSITIONS_VLLM_EVS_H_
#define MROPE_POSITIONS_VLLM_EVS_H_

// Positions of a prompt whose videos vLLM pruned with EVS (efficient video sampling), as
// vLLM's Model Runner V2 computes them after recompute_mrope_positions (tests/golden/README.md,
// "vLLM EVS rules" E1-E5), for Qwen2.5-VL and Qwen3-VL:
//   - every kept video token keeps its unpruned grid position (Qwen3-VL: its position in the
//     unpruned frame sequence, timestamps and markers included), relative to its item's base;
//   - the relative positions pass through the embedding dtype (rule E3: with bfloat16, values of
//     256 and more round to 2, 4, 8... steps), as a vLLM server computes them;
//   - text after an item resumes at base + w' (Qwen2.5-VL, images too) or at the item's maximum
//     + 1 (Qwen3-VL).
// Where vLLM writes an item somewhere other than its own placeholder (rules E2, E4, E5: vLLM
// defects), mrope places every item at its own placeholder and reports what vLLM does
// (vllm_defects()). A Qwen3-VL video at token 0 takes its base from the prompt's last initial
// position, as vLLM does (it reads index -1); that is reproduced and reported too.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mrope/positions/limits.h"
#include "mrope/positions/model_config.h"
#include "mrope/positions/sequence_positions.h"
#include "mrope/positions/vllm_request.h"

namespace mrope {

// The dtype of the embeddings that carry the position channels (the checkpoint's dtype).
enum class EmbedDType { kBfloat16, kFloat32 };

struct VllmEvsRequest {
  // The pruned prompt and its features: a Qwen2.5-VL video's placeholder holds its K kept
  // tokens; a Qwen3-VL video's holds every frame's timestamp and markers, with K video tokens in
  // all (vLLM puts them in frame 0).
  VllmRequest pruned;
  // One per video, in prompt order: t * h' * w' values in (frame, row, column) order, 1 for a
  // kept token. Frame 0 must be kept whole.
  std::vector<std::vector<int64_t>> keep_masks;
  EmbedDType embed_dtype = EmbedDType::kBfloat16;
  // When given, each mask must keep max(h'w', int(t h'w' (1 - rate))) tokens, as vLLM does.
  std::optional<double> video_pruning_rate;
};

// Something vLLM computes differently for this prompt.
struct VllmDefect {
  size_t feature = 0;  // index in pruned.features
  std::string rule;    // the golden README's rule: "E2", "E4", "E5", "index -1"
  std::string what;    // what vLLM does, and the tokens it moves
  bool reproduced = false;  // true when mrope's positions follow vLLM there
};

class VllmEvsPositions {
 public:
  // Checks the features (SortedFeatures), one mask per video with t h' w' values of 0 or 1,
  // frame 0 kept whole, and the kept count against the video's tokens in the prompt (and the
  // rate when given); errors name the video, the frame and the counts.
  static absl::StatusOr<VllmEvsPositions> Create(const ModelConfig& config,
                                                 const VllmEvsRequest& request,
                                                 const PositionLimits& limits = {});

  int64_t num_tokens() const { return static_cast<int64_t>(t_.size()); }
  // max + 1 - num_tokens; decode token i >= num_tokens() has position i + delta() on all axes.
  int64_t delta() const { return delta_; }
  absl::Span<const VllmDefect> vllm_defects() const { return defects_; }

  // Positions of tokens [begin, end) (decode steps past the prompt) into planes of end - begin
  // entries. int32 output refuses values above INT32_MAX.
  template <typename Out>
  absl::Status Fill(int64_t begin, int64_t end, PositionPlanes<Out> out) const;

 private:
  std::vector<int64_t> t_, h_, w_;
  int64_t delta_ = 0;
  std::vector<VllmDefect> defects_;
};

extern template absl::Status VllmEvsPositions::Fill<int64_t>(int64_t, int64_t,
                                                             PositionPlanes<int64_t>) const;
extern template absl::Status VllmEvsPositions::Fill<int32_t>(int64_t, int64_t,
                                                             PositionPlanes<int32_t>) const;
extern template absl::Status VllmEvsPositions::Fill<float>(int64_t, int64_t,
                                                           PositionPlanes<float>) const;

}  // namespace mrope

#endif  // MROPE_POSITIONS_VLLM_EVS_H_
