#ifndef MROPE_POSITIONS_INTERNAL_PACK_ROWS_H_
#define MROPE_POSITIONS_INTERNAL_PACK_ROWS_H_

// The one packing loop of PackSequences (a list of sequences, three axes) and PackBatch (a
// planned batch's rows, plan.num_axes axes).

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "mrope/common/status_macros.h"
#include "mrope/positions/limits.h"
#include "mrope/positions/sequence_positions.h"

namespace mrope {
namespace internal {

// `rows` rows of count(i) tokens each, back to back in num_axes planes; fill(i, out,
// axis_stride) writes row i's tokens [0, count(i)) at out + a * axis_stride for each axis a.
template <typename Out, typename Count, typename Fill>
absl::StatusOr<PackedPositions<Out>> PackRows(int64_t rows, int32_t num_axes, const Count& count,
                                              const Fill& fill, const PositionLimits& limits) {
  MROPE_RETURN_IF_ERROR(ValidatePositionLimits(limits));
  PackedPositions<Out> packed;
  packed.cu_seqlens.reserve(rows + 1);
  packed.cu_seqlens.push_back(0);
  for (int64_t i = 0; i < rows; ++i) {
    packed.total_tokens += count(i);
    if (packed.total_tokens > limits.max_total_tokens) {
      return absl::InvalidArgumentError(
          absl::StrCat("packed sequences have more than max_total_tokens = ",
                       limits.max_total_tokens, " tokens (", packed.total_tokens, ")"));
    }
    packed.cu_seqlens.push_back(packed.total_tokens);
  }
  const int64_t total = packed.total_tokens;
  packed.positions.resize(num_axes * total);
  for (int64_t i = 0; i < rows; ++i) {
    MROPE_RETURN_IF_ERROR(fill(i, packed.positions.data() + packed.cu_seqlens[i], total));
  }
  return packed;
}

}  // namespace internal
}  // namespace mrope

#endif  // MROPE_POSITIONS_INTERNAL_PACK_ROWS_H_
