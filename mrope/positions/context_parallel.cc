#include "mrope/positions/context_parallel.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "mrope/common/status_macros.h"
#include "mrope/positions/fill_kernels.h"

namespace mrope {
namespace {

// The rank's token count against limits.max_total_tokens, checked before anything is allocated.
absl::Status CheckRankTokens(int64_t num_tokens, int cp_rank, const PositionLimits& limits) {
  if (num_tokens <= limits.max_total_tokens) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("rank ", cp_rank, "'s slice has more than max_total_tokens = ",
                   limits.max_total_tokens, " tokens (", num_tokens, ")"));
}

// Sizes a slice of out.num_tokens tokens in num_axes planes from `sequences` sequences (or
// rows): the planes, room for the token indices and cu_seqlens, which starts at 0.
template <typename Out>
void AllocateSlice(int32_t num_axes, int64_t sequences, ContextParallelPositions<Out>& out) {
  out.positions.resize(num_axes * out.num_tokens);
  out.token_index.reserve(out.num_tokens);
  out.cu_seqlens.reserve(sequences + 1);
  out.cu_seqlens.push_back(0);
}

// Columns [begin, end) of one row of a padded batch (ContextParallelBatchSlice's contract), into
// plan.num_axes planes out + a * axis_stride.
template <typename Out>
absl::Status FillRowColumns(const BatchPlan& plan, int64_t row, Out pad, int64_t begin,
                            int64_t end, Out* out, int64_t axis_stride) {
  const auto fill_pad = [&](int64_t k, int64_t count) {
    for (int32_t a = 0; a < plan.num_axes; ++a) FillConstant(out + a * axis_stride + k, count, pad);
  };
  const RowLayout& layout = plan.layouts[row];
  const std::vector<int64_t>& columns = layout.scattered_columns;
  if (columns.empty()) {
    // One run from first_column: column c is the row's index c - first_column, past its own
    // tokens a decode step; columns before the run are padding.
    const int64_t first = layout.first_column;
    const int64_t pads = std::clamp(first - begin, int64_t{0}, end - begin);
    fill_pad(0, pads);
    if (begin + pads == end) return absl::OkStatus();
    return FillRowTokens<Out>(plan, row, begin + pads - first, end - first, out + pads,
                              axis_stride);
  }
  // Holes: real token i at columns[i] (ascending), padding in the gaps, decode steps n, n + 1,
  // ... after the last real token.
  const int64_t last = columns.back();
  auto next = std::lower_bound(columns.begin(), columns.end(), begin);
  for (int64_t column = begin; column < std::min(end, last + 1); ++column) {
    const int64_t k = column - begin;
    if (*next != column) {
      fill_pad(k, 1);
      continue;
    }
    const int64_t i = next - columns.begin();
    MROPE_RETURN_IF_ERROR(FillRowTokens<Out>(plan, row, i, i + 1, out + k, axis_stride));
    ++next;
  }
  const int64_t decode_begin = std::max(begin, last + 1);
  if (decode_begin >= end) return absl::OkStatus();
  const int64_t step = RowTokenCount(plan, row) + (decode_begin - last - 1);
  return FillRowTokens<Out>(plan, row, step, step + (end - decode_begin),
                            out + (decode_begin - begin), axis_stride);
}

// Rank cp_rank's chunks of `rows` sequences of count(i) tokens each (ContextParallelSlice's
// contract) in num_axes planes; fill(i, begin, end, out, axis_stride) writes tokens
// [begin, end) of sequence i.
template <typename Out, typename Count, typename Fill>
absl::StatusOr<ContextParallelPositions<Out>> SliceSequences(
    int64_t rows, int32_t num_axes, const Count& count, const Fill& fill,
    absl::Span<const int64_t> padded_lengths, int cp_size, int cp_rank,
    const PositionLimits& limits) {
  MROPE_RETURN_IF_ERROR(ValidatePositionLimits(limits));
  if (static_cast<int64_t>(padded_lengths.size()) != rows) {
    return absl::InvalidArgumentError(absl::StrCat("padded_lengths has ", padded_lengths.size(),
                                                   " entries for ", rows, " sequences"));
  }
  // Every check before any allocation sized by the lengths.
  ContextParallelPositions<Out> out;
  std::vector<std::array<TokenRange, 2>> chunks(rows);
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t padded = padded_lengths[i];
    if (padded < count(i)) {
      return absl::InvalidArgumentError(absl::StrCat("sequence ", i, ": padded length ", padded,
                                                     " is shorter than its ", count(i),
                                                     " tokens"));
    }
    auto rank_chunks = ContextParallelChunks(padded, cp_size, cp_rank);
    if (!rank_chunks.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("sequence ", i, ": ", rank_chunks.status().message()));
    }
    chunks[i] = *rank_chunks;
    out.num_tokens += padded / cp_size;
    MROPE_RETURN_IF_ERROR(CheckRankTokens(out.num_tokens, cp_rank, limits));
  }
  const int64_t n = out.num_tokens;
  AllocateSlice(num_axes, rows, out);
  Out* const t = out.positions.data();
  int64_t local = 0;
  int64_t packed_begin = 0;  // the sequence's first token in the padded packed batch
  for (int64_t i = 0; i < rows; ++i) {
    for (const TokenRange& range : chunks[i]) {
      MROPE_RETURN_IF_ERROR(fill(i, range.begin, range.end, t + local, n));
      for (int64_t j = range.begin; j < range.end; ++j) {
        out.token_index.push_back(packed_begin + j);
      }
      local += range.end - range.begin;
    }
    packed_begin += padded_lengths[i];
    out.cu_seqlens.push_back(local);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::array<TokenRange, 2>> ContextParallelChunks(int64_t padded_length,
                                                                int cp_size, int cp_rank) {
  if (cp_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("cp_size=", cp_size, " must be at least 1"));
  }
  if (cp_rank < 0 || cp_rank >= cp_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("cp_rank=", cp_rank, " must be in [0, cp_size=", cp_size, ")"));
  }
  const int64_t chunks = 2 * int64_t{cp_size};
  if (padded_length < 0 || padded_length % chunks != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "padded length ", padded_length, " must be a multiple of 2 * cp_size = ", chunks,
        " (Megatron-LM and TransformerEngine split each sequence into 2 * cp_size chunks)"));
  }
  const int64_t c = padded_length / chunks;
  const int64_t mirror = chunks - 1 - cp_rank;
  return std::array<TokenRange, 2>{TokenRange{cp_rank * c, (cp_rank + 1) * c},
                                   TokenRange{mirror * c, (mirror + 1) * c}};
}

template <typename Out>
absl::StatusOr<ContextParallelPositions<Out>> ContextParallelSlice(
    absl::Span<const SequencePositions> sequences, absl::Span<const int64_t> padded_lengths,
    int cp_size, int cp_rank, const PositionLimits& limits) {
  return SliceSequences<Out>(
      static_cast<int64_t>(sequences.size()), 3,
      [&](int64_t i) { return sequences[i].num_tokens(); },
      [&](int64_t i, int64_t begin, int64_t end, Out* out, int64_t axis_stride) {
        return sequences[i].Fill<Out>(begin, end,
                                      {out, out + axis_stride, out + 2 * axis_stride});
      },
      padded_lengths, cp_size, cp_rank, limits);
}

template <typename Out>
absl::StatusOr<ContextParallelPositions<Out>> ContextParallelSlice(
    const BatchPlan& plan, absl::Span<const int64_t> padded_lengths, int cp_size, int cp_rank,
    const PositionLimits& limits) {
  if (plan.evs != nullptr) {
    return absl::InvalidArgumentError(
        "cp_size: context parallelism slices training batches, not a vLLM EVS request");
  }
  return SliceSequences<Out>(
      plan.batch_size, plan.num_axes, [&](int64_t row) { return RowTokenCount(plan, row); },
      [&](int64_t row, int64_t begin, int64_t end, Out* out, int64_t axis_stride) {
        return FillRowTokens<Out>(plan, row, begin, end, out, axis_stride);
      },
      padded_lengths, cp_size, cp_rank, limits);
}

template <typename Out>
absl::StatusOr<ContextParallelPositions<Out>> ContextParallelBatchSlice(
    const BatchPlan& plan, int cp_size, int cp_rank, const PositionLimits& limits) {
  MROPE_RETURN_IF_ERROR(ValidatePositionLimits(limits));
  if (plan.evs != nullptr) {
    return absl::InvalidArgumentError(
        "cp_size: context parallelism slices training batches, not a vLLM EVS request");
  }
  const int64_t l = plan.seq_len;
  MROPE_ASSIGN_OR_RETURN(const auto chunks, ContextParallelChunks(l, cp_size, cp_rank));
  ContextParallelPositions<Out> out;
  const int64_t per_row = l / cp_size;
  out.num_tokens = plan.batch_size * per_row;  // no overflow: B * L is a planned batch
  MROPE_RETURN_IF_ERROR(CheckRankTokens(out.num_tokens, cp_rank, limits));
  const int64_t n = out.num_tokens;
  AllocateSlice(plan.num_axes, plan.batch_size, out);
  Out* const t = out.positions.data();
  const Out pad = static_cast<Out>(plan.rope_index_pad_value);
  int64_t local = 0;
  for (int64_t row = 0; row < plan.batch_size; ++row) {
    for (const TokenRange& range : chunks) {
      auto status =
          FillRowColumns<Out>(plan, row, pad, range.begin, range.end, t + local, n);
      if (!status.ok()) {
        return absl::Status(status.code(), absl::StrCat("row ", row, ": ", status.message()));
      }
      for (int64_t column = range.begin; column < range.end; ++column) {
        out.token_index.push_back(row * l + column);
      }
      local += range.end - range.begin;
    }
    out.cu_seqlens.push_back(local);
  }
  return out;
}

template absl::StatusOr<ContextParallelPositions<int64_t>> ContextParallelSlice<int64_t>(
    absl::Span<const SequencePositions>, absl::Span<const int64_t>, int, int,
    const PositionLimits&);
template absl::StatusOr<ContextParallelPositions<int32_t>> ContextParallelSlice<int32_t>(
    absl::Span<const SequencePositions>, absl::Span<const int64_t>, int, int,
    const PositionLimits&);
template absl::StatusOr<ContextParallelPositions<float>> ContextParallelSlice<float>(
    absl::Span<const SequencePositions>, absl::Span<const int64_t>, int, int,
    const PositionLimits&);
template absl::StatusOr<ContextParallelPositions<int64_t>> ContextParallelSlice<int64_t>(
    const BatchPlan&, absl::Span<const int64_t>, int, int, const PositionLimits&);
template absl::StatusOr<ContextParallelPositions<int32_t>> ContextParallelSlice<int32_t>(
    const BatchPlan&, absl::Span<const int64_t>, int, int, const PositionLimits&);
template absl::StatusOr<ContextParallelPositions<float>> ContextParallelSlice<float>(
    const BatchPlan&, absl::Span<const int64_t>, int, int, const PositionLimits&);
template absl::StatusOr<ContextParallelPositions<int64_t>> ContextParallelBatchSlice<int64_t>(
    const BatchPlan&, int, int, const PositionLimits&);
template absl::StatusOr<ContextParallelPositions<int32_t>> ContextParallelBatchSlice<int32_t>(
    const BatchPlan&, int, int, const PositionLimits&);
template absl::StatusOr<ContextParallelPositions<float>> ContextParallelBatchSlice<float>(
    const BatchPlan&, int, int, const PositionLimits&);

}  // namespace mrope
