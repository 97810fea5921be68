#ifndef MROPE_POSITIONS_CONTEXT_PARALLEL_H_
#define MROPE_POSITIONS_CONTEXT_PARALLEL_H_

// Context-parallel (CP) slices of a training batch's positions, cut exactly as Megatron-LM
// (RotaryEmbedding's get_pos_emb_on_this_cp_rank) and TransformerEngine
// (fused_apply_rotary_pos_emb_thd with cp_size / cp_rank) cut the rotary: every sequence,
// padded to a multiple of 2 * cp_size, is split into 2 * cp_size equal chunks, and rank r holds
// chunk r and chunk 2 * cp_size - 1 - r (the load balance for causal attention), in that order.
// Only the rank's own windows are filled (SequencePositions::Fill, or FillRowTokens of a batch
// plan's rows), never the other ranks'. Positions have 3 planes, or plan.num_axes (HunYuan-VL's
// PositionScheme::kSequentialGrid).
//
// Packed (THD): the sequences of a packed batch, each with its padded length (the
// cu_seqlens_padded of TE / Megatron), give the rank's [3][sum(padded) / cp_size] positions,
// sequence after sequence; tokens past a sequence's own tokens (up to its padded length) get
// decode positions as SequencePositions::Fill (or FillRowTokens) gives them past the prompt:
// index + delta on every axis.
//
// Padded (BSHD), ContextParallelBatchSlice: the rows of a planned [B][L] batch are cut as given,
// padding where the attention mask puts it (left, right or holes), so that the token indices
// gather the right ids: row * L + column. Every real token keeps its own position; a padding
// slot after a row's last real token holds the next decode position (as the packed case); any
// other padding slot (left padding, holes) holds what get_rope_index writes into padding slots
// (BatchPlan::rope_index_pad_value: training runs the model's forward, not generate()).
//
// A padded length that is not a multiple of 2 * cp_size, or shorter than its sequence, is
// refused: mrope does not pad on its own, since the caller's attention must see the same layout.

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/limits.h"
#include "mrope/positions/position_buffer.h"
#include "mrope/positions/sequence_positions.h"

namespace mrope {

// Tokens [begin, end) of one sequence.
struct TokenRange {
  int64_t begin = 0;
  int64_t end = 0;
};

// Rank cp_rank's two chunks of a sequence of padded_length tokens: [r * c, (r + 1) * c) and
// [(2 * cp_size - 1 - r) * c, ...), c = padded_length / (2 * cp_size). InvalidArgument for
// cp_size < 1, cp_rank outside [0, cp_size) or padded_length not a non-negative multiple of
// 2 * cp_size.
absl::StatusOr<std::array<TokenRange, 2>> ContextParallelChunks(int64_t padded_length,
                                                                int cp_size, int cp_rank);

template <typename Out>
struct ContextParallelPositions {
  // [3][num_tokens] ([plan.num_axes][num_tokens] of a plan): rank r's tokens, sequence after
  // sequence.
  PositionBuffer<Out> positions;
  // The rank's local varlen layout: {0, p0 / cp_size, p0 / cp_size + p1 / cp_size, ...}.
  std::vector<int64_t> cu_seqlens;
  // Of each local token, its index in the padded packed batch (earlier sequences' padded
  // lengths plus its index in its sequence): what to gather q, k and the labels by.
  std::vector<int64_t> token_index;
  int64_t num_tokens = 0;
};

// Rank cp_rank's positions of `sequences` (each planned alone) with padded_lengths[i] tokens
// each (>= its num_tokens, a multiple of 2 * cp_size). Errors name the sequence, its lengths
// and cp_size; the rank's tokens are limited by limits.max_total_tokens.
template <typename Out>
absl::StatusOr<ContextParallelPositions<Out>> ContextParallelSlice(
    absl::Span<const SequencePositions> sequences, absl::Span<const int64_t> padded_lengths,
    int cp_size, int cp_rank, const PositionLimits& limits = {});

// The same of the rows of a planned batch, each row's real tokens (padding removed) a sequence
// (FillRowTokens, batch.h): any scheme, [plan.num_axes][num_tokens]. Refuses a vLLM EVS plan.
template <typename Out>
absl::StatusOr<ContextParallelPositions<Out>> ContextParallelSlice(
    const BatchPlan& plan, absl::Span<const int64_t> padded_lengths, int cp_size, int cp_rank,
    const PositionLimits& limits = {});

// Rank cp_rank's chunks of every row of a planned padded batch (L = plan.seq_len, a multiple of
// 2 * cp_size), as the header comment says: [num_axes][B * L / cp_size], row after row,
// cu_seqlens {0, L / cp_size, ...}. Refuses a vLLM EVS plan (one request, not a training batch).
template <typename Out>
absl::StatusOr<ContextParallelPositions<Out>> ContextParallelBatchSlice(
    const BatchPlan& plan, int cp_size, int cp_rank, const PositionLimits& limits = {});

extern template absl::StatusOr<ContextParallelPositions<int64_t>> ContextParallelSlice<int64_t>(
    absl::Span<const SequencePositions>, absl::Span<const int64_t>, int, int,
    const PositionLimits&);
extern template absl::StatusOr<ContextParallelPositions<int32_t>> ContextParallelSlice<int32_t>(
    absl::Span<const SequencePositions>, absl::Span<const int64_t>, int, int,
    const PositionLimits&);
extern template absl::StatusOr<ContextParallelPositions<float>> ContextParallelSlice<float>(
    absl::Span<const SequencePositions>, absl::Span<const int64_t>, int, int,
    const PositionLimits&);
extern template absl::StatusOr<ContextParallelPositions<int64_t>> ContextParallelSlice<int64_t>(
    const BatchPlan&, absl::Span<const int64_t>, int, int, const PositionLimits&);
extern template absl::StatusOr<ContextParallelPositions<int32_t>> ContextParallelSlice<int32_t>(
    const BatchPlan&, absl::Span<const int64_t>, int, int, const PositionLimits&);
extern template absl::StatusOr<ContextParallelPositions<float>> ContextParallelSlice<float>(
    const BatchPlan&, absl::Span<const int64_t>, int, int, const PositionLimits&);
extern template absl::StatusOr<ContextParallelPositions<int64_t>>
ContextParallelBatchSlice<int64_t>(const BatchPlan&, int, int, const PositionLimits&);
extern template absl::StatusOr<ContextParallelPositions<int32_t>>
ContextParallelBatchSlice<int32_t>(const BatchPlan&, int, int, const PositionLimits&);
extern template absl::StatusOr<ContextParallelPositions<float>> ContextParallelBatchSlice<float>(
    const BatchPlan&, int, int, const PositionLimits&);

}  // namespace mrope

#endif  // MROPE_POSITIONS_CONTEXT_PARALLEL_H_
