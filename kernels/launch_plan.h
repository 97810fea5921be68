#ifndef MROPE_KERNELS_LAUNCH_PLAN_H_
#define MROPE_KERNELS_LAUNCH_PLAN_H_

// Internal to kernels/: turns validated arguments into a LaunchPlan (kernel choice, block and
// grid shape, by-value kernel parameters). Host-only, no CUDA calls, so it is unit-tested
// without a GPU.

#include <cstdint>
#include <limits>

#include "absl/status/statusor.h"
#include "kernels/kernel_params.h"
#include "kernels/mrope_kernel_args.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {
namespace kernel_internal {

// Below this many tokens the q+k heads are split across blockIdx.y (one pass of heads per
// block) so that small decode batches still spread over many SMs; at and above it one block
// covers all heads of its tokens and cos/sin are computed exactly once per token.
inline constexpr int64_t kSplitHeadsBelowTokens = 1024;

// A small batch splits its heads into more chunks (down to one warp per block) until the grid
// has this many blocks: two per SM of an H100/H200 (132 SMs). No device query: the launch
// stays query-free and graph-capturable.
inline constexpr int64_t kTargetBlocks = 264;

// Planner settings a caller may tighten (tests reach the kernel's token-group loop with a small
// max_grid_x: each block then handles several groups of tokens in turn).
struct PlanOptions {
  int64_t max_grid_x = std::numeric_limits<int32_t>::max();
};

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Blocks along x for `num_tokens` tokens in groups of `tokens_per_block`, capped (the kernels
// stride over token groups) at int32 and options.max_grid_x.
uint32_t TokenGroupBlocks(int64_t num_tokens, int64_t tokens_per_block, const PlanOptions& options);

// Most tokens a block stages the positions and cos/sin of (RotationShared): kMaxTokensPerBlock
// for three axes and a cos/sin per pair, fewer for more axes or a cos/sin per element.
int64_t MaxTokensPerBlock(int num_axes, int num_pairs, bool per_element);

// The position and cos/sin sources of a launch (validated arguments), as both kernels take them.
RotaryParams PlanRotaryParams(const RotarySpec& spec, const PositionsView& positions,
                              const SequenceDeltaPositions& sequence_delta,
                              const DeviceCosSinTable& table, RotationDirection direction,
                              int* error_flag);

// Validates (ValidateMropeKernelArgs) and plans the launch.
absl::StatusOr<LaunchPlan> PlanMropeLaunch(const RotarySpec& spec, const MropeKernelArgs& args,
                                           const PlanOptions& options = {});

}  // namespace kernel_internal
}  // namespace mrope

#endif  // MROPE_KERNELS_LAUNCH_PLAN_H_
