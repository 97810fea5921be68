#ifndef MROPE_POSITIONS_INTERNAL_VLLM_EVS_DEFECTS_H_
#define MROPE_POSITIONS_INTERNAL_VLLM_EVS_DEFECTS_H_

// Where vLLM's EVS path computes otherwise than mrope for a pruned prompt (tests/golden/README.md,
// "vLLM EVS rules"): E2, E4, E5, and the reproduced index -1 at token 0 (vllm_evs.cc).

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "mrope/positions/internal/vllm_frames.h"
#include "mrope/positions/model_config.h"
#include "mrope/positions/vllm_evs.h"
#include "mrope/positions/vllm_request.h"

namespace mrope {
namespace vllm_internal {

// `sorted`: the request's features in offset order (SortedFeatures); `frames_of[s]`: the frames
// of sorted[s] when it is a video of a frames family; `bases[s]`: the base mrope gave it.
std::vector<VllmDefect> FindVllmDefects(const SpecialTokens& ids,
                                        absl::Span<const int64_t> tokens,
                                        const VllmRequest& request,
                                        const std::vector<const MultiModalFeature*>& sorted,
                                        const std::vector<std::vector<Frame>>& frames_of,
                                        bool frames_family, const MergeDivisor& merge,
                                        const std::vector<int64_t>& bases);

}  // namespace vllm_internal
}  // namespace mrope

#endif  // MROPE_POSITIONS_INTERNAL_VLLM_EVS_DEFECTS_H_
