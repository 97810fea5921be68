#include "mrope/positions/context_parallel.h"

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "mrope/common/status_macros.h"

namespace mrope {

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
  MROPE_RETURN_IF_ERROR(ValidatePositionLimits(limits));
  if (padded_lengths.size() != sequences.size()) {
    return absl::InvalidArgumentError(absl::StrCat("padded_lengths has ", padded_lengths.size(),
                                                   " entries for ", sequences.size(),
                                                   " sequences"));
  }
  // Every check before any allocation sized by the lengths.
  ContextParallelPositions<Out> out;
  std::vector<std::array<TokenRange, 2>> chunks(sequences.size());
  for (size_t i = 0; i < sequences.size(); ++i) {
    const int64_t padded = padded_lengths[i];
    if (padded < sequences[i].num_tokens()) {
      return absl::InvalidArgumentError(
          absl::StrCat("sequence ", i, ": padded length ", padded, " is shorter than its ",
                       sequences[i].num_tokens(), " tokens"));
    }
    auto rank_chunks = ContextParallelChunks(padded, cp_size, cp_rank);
    if (!rank_chunks.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("sequence ", i, ": ", rank_chunks.status().message()));
    }
    chunks[i] = *rank_chunks;
    out.num_tokens += padded / cp_size;
    if (out.num_tokens > limits.max_total_tokens) {
      return absl::InvalidArgumentError(
          absl::StrCat("rank ", cp_rank, "'s slice has more than max_total_tokens = ",
                       limits.max_total_tokens, " tokens (", out.num_tokens, ")"));
    }
  }
  const int64_t n = out.num_tokens;
  out.positions.resize(3 * n);
  out.token_index.reserve(n);
  out.cu_seqlens.reserve(sequences.size() + 1);
  out.cu_seqlens.push_back(0);
  Out* const t = out.positions.data();
  int64_t local = 0;
  int64_t packed_begin = 0;  // the sequence's first token in the padded packed batch
  for (size_t i = 0; i < sequences.size(); ++i) {
    for (const TokenRange& range : chunks[i]) {
      MROPE_RETURN_IF_ERROR(sequences[i].Fill<Out>(
          range.begin, range.end, {t + local, t + n + local, t + 2 * n + local}));
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

template absl::StatusOr<ContextParallelPositions<int64_t>> ContextParallelSlice<int64_t>(
    absl::Span<const SequencePositions>, absl::Span<const int64_t>, int, int,
    const PositionLimits&);
template absl::StatusOr<ContextParallelPositions<int32_t>> ContextParallelSlice<int32_t>(
    absl::Span<const SequencePositions>, absl::Span<const int64_t>, int, int,
    const PositionLimits&);
template absl::StatusOr<ContextParallelPositions<float>> ContextParallelSlice<float>(
    absl::Span<const SequencePositions>, absl::Span<const int64_t>, int, int,
    const PositionLimits&);

}  // namespace mrope
