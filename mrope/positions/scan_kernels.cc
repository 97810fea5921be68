#include "mrope/positions/scan_kernels.h"

#include <cstdint>

#include "mrope/positions/cpu_clones.h"

namespace mrope {
namespace {

// int64 values per 64-byte vector: a block is four of them.
constexpr int64_t kLanes = 8;
static_assert(kScanBlock == 4 * kLanes, "BlockMisses reads four vectors");

// OR of miss() over the block at `v`. Written as 8 lanes of four values kLanes apart, so that
// every clone vectorises it into straight-line code (AVX-512: four loads, two ternary logic
// ops, one reduction). The plain 32-value loop became an inner loop over 4 vectors that GCC
// did not unroll, whose speed changed by up to 40% with the code's alignment.
template <typename Miss>
MROPE_CLONE_INLINE uint64_t BlockMisses(const int64_t* v, Miss miss) {
  uint64_t any = 0;
  for (int64_t j = 0; j < kLanes; ++j) {
    any |= miss(static_cast<uint64_t>(v[j])) | miss(static_cast<uint64_t>(v[j + kLanes])) |
           miss(static_cast<uint64_t>(v[j + 2 * kLanes])) |
           miss(static_cast<uint64_t>(v[j + 3 * kLanes]));
  }
  return any;
}

// First index in [begin, end) whose value has miss(value) != 0, or end. Whole blocks are tested
// at once (BlockMisses); only the block with a hit, and the tail, go value by value.
template <typename Miss>
MROPE_CLONE_INLINE int64_t FirstMiss(const int64_t* values, int64_t begin, int64_t end, Miss miss) {
  int64_t i = begin;
  while (i + kScanBlock <= end && BlockMisses(values + i, miss) == 0) i += kScanBlock;
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
  const auto miss = [v](uint64_t x) { return x ^ v; };
  while (start >= kScanBlock && BlockMisses(data + start - kScanBlock, miss) == 0) {
    start -= kScanBlock;
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
