#include "mrope/positions/scan_kernels.h"

#include <cstdint>

#include "mrope/positions/cpu_clones.h"

namespace mrope {
namespace {

// First index in [begin, end) whose value has miss(value) != 0, or end. Whole blocks OR miss()
// into one word and test it once (constant trip count: vectorised at -O2); only the block with
// a hit, and the tail, go value by value.
template <typename Miss>
MROPE_CLONE_INLINE int64_t FirstMiss(const int64_t* values, int64_t begin, int64_t end, Miss miss) {
  int64_t i = begin;
  for (; i + kScanBlock <= end; i += kScanBlock) {
    uint64_t any = 0;
    for (int64_t j = 0; j < kScanBlock; ++j) any |= miss(static_cast<uint64_t>(values[i + j]));
    if (any != 0) break;
  }
  while (i < end && miss(static_cast<uint64_t>(values[i])) == 0) ++i;
  return i;
}

}  // namespace

MROPE_CPU_CLONES int64_t EqualRunEnd(absl::Span<const int64_t> values, int64_t begin,
                                     int64_t value) {
  const uint64_t v = static_cast<uint64_t>(value);
  return FirstMiss(values.data(), begin, values.size(), [v](uint64_t x) { return x ^ v; });
}

MROPE_CPU_CLONES int64_t TrailingEqualRunStart(absl::Span<const int64_t> values, int64_t value) {
  const uint64_t v = static_cast<uint64_t>(value);
  const int64_t* data = values.data();
  int64_t start = values.size();
  for (; start >= kScanBlock; start -= kScanBlock) {
    uint64_t any = 0;
    for (int64_t j = 0; j < kScanBlock; ++j) {
      any |= static_cast<uint64_t>(data[start - kScanBlock + j]) ^ v;
    }
    if (any != 0) break;
  }
  while (start > 0 && data[start - 1] == value) --start;
  return start;
}

MROPE_CPU_CLONES int64_t BelowRunEnd(absl::Span<const int64_t> values, int64_t begin,
                                     int64_t limit) {
  if (limit <= 0) return begin;
  // x is in [0, limit) iff neither x nor (limit - 1 - x) has its sign bit set: a negative x
  // sets the first, an x >= limit the second (limit - 1 < 2^63, so no other wrap-around).
  const uint64_t last = static_cast<uint64_t>(limit) - 1;
  return FirstMiss(values.data(), begin, values.size(),
                   [last](uint64_t x) { return (x | (last - x)) >> 63; });
}

}  // namespace mrope
