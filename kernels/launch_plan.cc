#include "kernels/launch_plan.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/status/statusor.h"
#include "kernels/mrope_kernel_validate.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/rope_math.h"

namespace mrope {
namespace kernel_internal {
namespace {

constexpr int kVectorBytes = 16;

// True if every 16-byte access of a unit of `view` is 16-byte aligned (given that the unit's
// offsets inside a head are multiples of `vec` elements). Strides of size-1 dims never apply.
bool VectorAligned(const HeadsView& view, int vec) {
  return reinterpret_cast<uintptr_t>(view.data) % kVectorBytes == 0 &&
         (view.num_tokens <= 1 || view.token_stride % vec == 0) &&
         (view.num_heads <= 1 || view.head_stride % vec == 0);
}

}  // namespace

uint32_t TokenGroupBlocks(int64_t num_tokens, int64_t tokens_per_block,
                          const PlanOptions& options) {
  return static_cast<uint32_t>(std::min<int64_t>(
      {CeilDiv(num_tokens, tokens_per_block), std::numeric_limits<int32_t>::max(),
       std::max<int64_t>(1, options.max_grid_x)}));
}

int64_t MaxTokensPerBlock(int num_axes, int num_pairs, bool per_element) {
  const int slots_per_token = per_element ? 2 * num_pairs : num_pairs;
  return std::min<int64_t>(
      {kMaxTokensPerBlock, kSharedPositions / num_axes, kSharedPairs / slots_per_token});
}

RotaryParams PlanRotaryParams(const RotarySpec& spec, const PositionsView& positions,
                              const SequenceDeltaPositions& sequence_delta,
                              const DeviceCosSinTable& table, RotationDirection direction,
                              int* error_flag) {
  RotaryParams r;
  r.direction = direction;
  if (positions.data != nullptr) {
    r.position_source =
        positions.is_int64 ? PositionSource::kPlanarInt64 : PositionSource::kPlanarInt32;
    r.positions = positions.data;
    r.axis_stride = positions.axis_stride;
  } else {
    r.position_source = PositionSource::kSequenceDelta;
    r.token_index = sequence_delta.token_index;
    r.seq_id = sequence_delta.seq_id;
    r.seq_delta = sequence_delta.delta;
    r.num_seqs = sequence_delta.num_seqs;
  }
  const AxisMap& map = spec.axis_map;
  r.num_axes = static_cast<uint8_t>(AxisCount(map));
  r.split_halves = map.split_halves;
  for (int pair = 0; pair < spec.rotary_dim / 2; ++pair) {
    PackPairAxis(r.pair_axes, pair, map.axis[pair],
                 map.split_halves ? map.second_axis[pair] : map.axis[pair]);
  }
  if (table.cos != nullptr) {
    r.cos_table = table.cos;
    r.sin_table = table.sin;
    r.table_row_stride = table.row_stride;
    r.position_limit = table.max_position;
  } else {
    std::copy(spec.inv_freq.begin(), spec.inv_freq.end(), r.inv_freq);
    r.attention_scaling = spec.attention_scaling;
    r.sincos_math = spec.sincos_math;
    r.position_limit = kMaxPosition;
  }
  r.error_flag = error_flag;
  return r;
}

absl::StatusOr<LaunchPlan> PlanMropeLaunch(const RotarySpec& spec, const MropeKernelArgs& args,
                                           const PlanOptions& options) {
  MROPE_RETURN_IF_ERROR(ValidateMropeKernelArgs(spec, args));
  LaunchPlan plan;
  plan.dtype = args.q.dtype;
  plan.layout = spec.layout;

  KernelParams& p = plan.params;
  p.q = args.q.data;
  p.k = args.k.data;
  p.q_token_stride = args.q.num_tokens > 1 ? args.q.token_stride : 0;
  p.q_head_stride = args.q.num_heads > 1 ? args.q.head_stride : 0;
  p.k_token_stride = args.k.num_tokens > 1 ? args.k.token_stride : 0;
  p.k_head_stride = args.k.num_heads > 1 ? args.k.head_stride : 0;
  p.num_tokens = args.q.num_tokens;
  p.num_q_heads = args.q.num_heads;
  p.num_k_heads = args.k.num_heads;
  p.rotary_dim = spec.rotary_dim;

  p.rotary = PlanRotaryParams(spec, args.positions, args.sequence_delta, args.table,
                              args.direction, args.error_flag);

  // Access width: a unit is two vectors (one per half of the rotary dims) of `vec` elements.
  const int num_pairs = spec.rotary_dim / 2;
  const int vec = kVectorBytes / ElementSize(plan.dtype);
  plan.vectorized =
      num_pairs % vec == 0 && VectorAligned(args.q, vec) && VectorAligned(args.k, vec);
  const int units = plan.vectorized ? num_pairs / vec : num_pairs;
  if (plan.vectorized && !p.rotary.split_halves &&
      (spec.rotary_dim == 64 || spec.rotary_dim == 128 || spec.rotary_dim == 256)) {
    plan.specialized_rotary_dim = spec.rotary_dim;
  }

  // Block: `units` threads per head x `rows` heads per pass x `tokens` tokens per block.
  const int64_t heads = int64_t{p.num_q_heads} + p.num_k_heads;
  const int64_t max_rows = std::max(1, kMaxBlockThreads / units);
  const int64_t min_passes = CeilDiv(heads, max_rows);
  const int64_t max_tokens =
      MaxTokensPerBlock(p.rotary.num_axes, num_pairs, /*per_element=*/p.rotary.split_halves);
  const auto tokens_per_block = [&](int64_t rows) {
    return std::max<int64_t>(1, std::min(kMaxBlockThreads / (units * rows), max_tokens));
  };
  constexpr int64_t kMaxGridY = 65535;
  constexpr int64_t kWarpSize = 32;
  int64_t rows = 0;
  int64_t tokens = 0;
  int64_t chunks = 1;
  int64_t heads_per_chunk = heads;
  if (p.num_tokens >= kSplitHeadsBelowTokens) {
    // One block covers every head of its tokens, in at least kPassesInFlight passes when there
    // are that many heads, balanced (rows = ceil(heads / passes)) so the last one is not mostly
    // idle.
    const int64_t passes = std::max(min_passes, std::min<int64_t>(kPassesInFlight, heads));
    rows = CeilDiv(heads, passes);
    tokens = tokens_per_block(rows);
    plan.passes_in_flight = plan.vectorized ? kPassesInFlight : 1;
  } else {
    // Small batches: one pass of heads per block, in as many chunks (blockIdx.y) as it takes to
    // reach kTargetBlocks. Each block keeps at least one warp, and a thread for each cos/sin
    // slot of its tokens: a decode launch is a chain of latencies, and a second round of
    // cos/sin would lengthen it.
    rows = CeilDiv(heads, min_passes);
    tokens = tokens_per_block(rows);
    const int64_t token_groups = CeilDiv(p.num_tokens, tokens);
    const int64_t min_threads = std::min<int64_t>(kMaxBlockThreads,
                                                  std::max<int64_t>(kWarpSize, tokens * num_pairs));
    const int64_t min_rows = std::min({heads, rows, CeilDiv(min_threads, units * tokens)});
    const int64_t wanted =
        std::max(min_passes, CeilDiv(kTargetBlocks, std::max<int64_t>(1, token_groups)));
    heads_per_chunk = CeilDiv(heads, std::min(wanted, CeilDiv(heads, min_rows)));
    chunks = CeilDiv(heads, heads_per_chunk);
    if (chunks > kMaxGridY) {
      chunks = 1;
      heads_per_chunk = heads;
    } else {
      rows = heads_per_chunk;
    }
    plan.passes_in_flight = 1;
  }
  plan.block_x = static_cast<uint32_t>(units);
  plan.block_y = static_cast<uint32_t>(rows);
  plan.block_z = static_cast<uint32_t>(tokens);
  plan.grid_y = static_cast<uint32_t>(chunks);
  p.heads_per_chunk = static_cast<int32_t>(heads_per_chunk);
  plan.grid_x = TokenGroupBlocks(p.num_tokens, tokens, options);
  return plan;
}

}  // namespace kernel_internal
}  // namespace mrope
