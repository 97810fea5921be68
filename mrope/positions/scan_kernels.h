#ifndef MROPE_POSITIONS_SCAN_KERNELS_H_
#define MROPE_POSITIONS_SCAN_KERNELS_H_

// The searches under the token scanner and the attention-mask check. Each reads its values once,
// in blocks of kScanBlock tested with no branch per value (the compiler vectorises them; see
// cpu_clones.h), and looks for the exact index only inside the first block that has a hit, so
// a long run costs about one load and one OR per vector of values.

#include <cstdint>

#include "absl/types/span.h"

namespace mrope {

// Values per block of the searches (exposed so that tests can put hits at every offset).
inline constexpr int64_t kScanBlock = 32;

// End of the run of entries equal to `value` from `begin`: the first index >= begin whose
// value differs, or values.size(). `begin` must be in [0, values.size()].
int64_t EqualRunEnd(absl::Span<const int64_t> values, int64_t begin, int64_t value);

// Start of the run of entries equal to `value` that ends `values`: the smallest i such that
// values[i, size) all equal `value` (values.size() when the last entry differs).
int64_t TrailingEqualRunStart(absl::Span<const int64_t> values, int64_t value);

// End of the run of entries in [0, limit) from `begin` (negative values end it too), or
// values.size(). `begin` must be in [0, values.size()]; limit <= 0 is an empty range.
int64_t BelowRunEnd(absl::Span<const int64_t> values, int64_t begin, int64_t limit);

}  // namespace mrope

#endif  // MROPE_POSITIONS_SCAN_KERNELS_H_
