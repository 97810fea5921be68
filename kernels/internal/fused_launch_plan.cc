#include "kernels/internal/fused_launch_plan.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/status/statusor.h"
#include "kernels/fused_kernel_validate.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/qk_norm_math.h"

namespace mrope {
namespace kernel_internal {
namespace {

StridedHeads Strided(const HeadsView& v) {
  return {v.data, v.num_tokens > 1 ? v.token_stride : 0, v.num_heads > 1 ? v.head_stride : 0};
}

// True if chunks of `chunk` elements of `v` (at offsets that are multiples of `chunk`) are
// aligned to their size in bytes.
bool ChunksAligned(const HeadsView& v, int chunk) {
  const int64_t bytes = int64_t{chunk} * ElementSize(v.dtype);
  return reinterpret_cast<uintptr_t>(v.data) % bytes == 0 &&
         (v.num_tokens <= 1 || v.token_stride % chunk == 0) &&
         (v.num_heads <= 1 || v.head_stride % chunk == 0);
}

bool CacheChunksAligned(const PagedKvCache& cache, int chunk) {
  const int64_t bytes = int64_t{chunk} * ElementSize(cache.dtype);
  return reinterpret_cast<uintptr_t>(cache.k) % bytes == 0 &&
         reinterpret_cast<uintptr_t>(cache.v) % bytes == 0 && cache.block_stride % chunk == 0 &&
         cache.slot_stride % chunk == 0 && cache.head_stride % chunk == 0;
}

NormParams Norm(const QkNormArgs& norm) {
  return {norm.form, norm.weight_dtype, norm.weight, norm.eps};
}

}  // namespace

absl::StatusOr<FusedLaunchPlan> PlanFusedLaunch(const RotarySpec& spec,
                                                const FusedMropeArgs& args,
                                                const PlanOptions& options) {
  MROPE_RETURN_IF_ERROR(ValidateFusedMropeArgs(spec, args));
  FusedLaunchPlan plan;
  plan.dtype = args.q.dtype;
  const bool cache_written = args.slot_mapping != nullptr;
  const HeadsView& q_out = args.q_out.data != nullptr ? args.q_out : args.q;

  FusedParams& p = plan.params;
  p.rotary = PlanRotaryParams(spec, args.positions, args.sequence_delta, args.table,
                              args.direction, args.error_flag);
  p.q = Strided(args.q);
  p.k = Strided(args.k);
  p.q_out = Strided(q_out);
  p.q_out_dtype = q_out.dtype;
  p.q_scale = args.q_scale;
  if (args.k_out.data != nullptr) p.k_out = Strided(args.k_out);
  p.num_tokens = args.q.num_tokens;
  p.num_q_heads = args.q.num_heads;
  p.num_k_heads = args.k.num_heads;
  p.head_dim = spec.head_dim;
  p.rotary_dim = spec.rotary_dim;
  p.layout = spec.layout;
  p.q_norm = Norm(args.q_norm);
  p.k_norm = Norm(args.k_norm);
  if (cache_written) {
    const PagedKvCache& cache = args.cache;
    p.v = Strided(args.v);
    p.slot_mapping = args.slot_mapping;
    p.num_slots = cache.num_blocks * cache.block_size;
    p.block_size = cache.block_size;
    p.k_cache = cache.k;
    p.v_cache = cache.v;
    p.cache_dtype = cache.dtype;
    p.cache_block_stride = cache.block_stride;
    p.cache_slot_stride = cache.slot_stride;
    p.cache_head_stride = cache.head_stride;
    p.k_scale = cache.k_scale;
    p.v_scale = cache.v_scale;
    p.per_head_scale = cache.per_head_scale;
  }

  plan.xd_forms = spec.axis_map.split_halves ||
                  args.q_norm.form == QkNormForm::kWeightAfterRotary ||
                  args.k_norm.form == QkNormForm::kWeightAfterRotary;

  const int chunk = NormChunkElements(ElementSize(plan.dtype));
  plan.vectorized = spec.head_dim % chunk == 0 && ChunksAligned(args.q, chunk) &&
                    ChunksAligned(args.k, chunk) && ChunksAligned(q_out, chunk) &&
                    (args.k_out.data == nullptr || ChunksAligned(args.k_out, chunk)) &&
                    (!cache_written ||
                     (ChunksAligned(args.v, chunk) && CacheChunksAligned(args.cache, chunk)));

  // Block: `lanes` per head x `slots` heads per pass x `tokens`; at most kMaxBlockThreads
  // threads and kFusedStageFloats staged values.
  const int64_t lanes = NormLanes(spec.head_dim, chunk);
  const int64_t heads = int64_t{p.num_q_heads} + p.num_k_heads;
  const int64_t max_slots =
      std::max<int64_t>(1, std::min<int64_t>(kMaxBlockThreads / lanes,
                                             kFusedStageFloats / spec.head_dim));
  const int64_t num_pairs = spec.rotary_dim / 2;
  int64_t slots = 0;
  int64_t tokens = 1;
  int64_t heads_per_chunk = heads;
  if (p.num_tokens >= kSplitHeadsBelowTokens) {
    // One block covers every head of its tokens, in balanced passes, at least as many as a
    // thread keeps in flight: the loads of a token's heads are then all issued at once by
    // fewer threads, and the smaller blocks leave room for more tokens per SM.
    const int64_t passes =
        std::max(CeilDiv(heads, max_slots),
                 std::min<int64_t>(heads, FusedPassesInFlight(ElementSize(plan.dtype),
                                                              plan.vectorized)));
    slots = CeilDiv(heads, passes);
    tokens = std::max<int64_t>(
        1, std::min<int64_t>({kMaxBlockThreads / (lanes * slots),
                              kFusedStageFloats / (slots * spec.head_dim),
                              MaxTokensPerBlock(p.rotary.num_axes, num_pairs, plan.xd_forms)}));
  } else {
    // Small batches: a token per block and the heads split into chunks (blockIdx.y) until the
    // grid has kTargetBlocks blocks, but each block keeps a thread per cos/sin pair (at least
    // a warp): a decode launch is a chain of latencies, and a second round of sincos would
    // lengthen it (as in the M-RoPE kernel's planner).
    constexpr int64_t kMaxGridY = 65535;
    constexpr int64_t kWarpSize = 32;
    const int64_t chunks =
        std::clamp<int64_t>(CeilDiv(kTargetBlocks, std::max<int64_t>(1, p.num_tokens)), 1,
                            std::min(heads, kMaxGridY));
    const int64_t min_slots =
        std::min({heads, max_slots, CeilDiv(std::max(kWarpSize, num_pairs), lanes)});
    heads_per_chunk = std::max(CeilDiv(heads, chunks), min_slots);
    slots = std::min(heads_per_chunk, max_slots);
  }
  p.heads_per_chunk = static_cast<int32_t>(heads_per_chunk);
  plan.block_x = static_cast<uint32_t>(lanes);
  plan.block_y = static_cast<uint32_t>(slots);
  plan.block_z = static_cast<uint32_t>(tokens);
  plan.grid_y = static_cast<uint32_t>(CeilDiv(heads, heads_per_chunk));
  plan.grid_x = TokenGroupBlocks(p.num_tokens, tokens, options);
  return plan;
}

}  // namespace kernel_internal
}  // namespace mrope
