// The vectorised searches under the token scanner against their scalar definitions, with the
// value that ends a run at every offset of several blocks, from every start offset in a block.

#include "mrope/positions/scan_kernels.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "mrope/positions/limits.h"

namespace mrope {
namespace {

// Long enough for whole blocks, a partial tail, and hits in every lane of a block.
constexpr int64_t kLength = 3 * kScanBlock + 7;

int64_t ScalarEqualRunEnd(const std::vector<int64_t>& v, int64_t begin, int64_t value) {
  while (begin < static_cast<int64_t>(v.size()) && v[begin] == value) ++begin;
  return begin;
}

int64_t ScalarTrailingEqualRunStart(const std::vector<int64_t>& v, int64_t value) {
  int64_t start = v.size();
  while (start > 0 && v[start - 1] == value) --start;
  return start;
}

int64_t ScalarBelowRunEnd(const std::vector<int64_t>& v, int64_t begin, int64_t limit) {
  while (begin < static_cast<int64_t>(v.size()) && v[begin] >= 0 && v[begin] < limit) ++begin;
  return begin;
}

TEST(ScanKernels, EqualRunEndStopsAtEveryOffset) {
  for (const int64_t value : {int64_t{0}, int64_t{1}, int64_t{151655}, int64_t{-1}}) {
    for (const int64_t other : {value + 1, value - 1, value ^ (int64_t{1} << 62),
                                std::numeric_limits<int64_t>::min()}) {
      for (int64_t size = 0; size <= kLength; size += (size < 2 * kScanBlock ? 1 : 5)) {
        for (int64_t hit = 0; hit <= size; ++hit) {  // hit == size: no hit at all
          std::vector<int64_t> v(size, value);
          if (hit < size) v[hit] = other;
          for (const int64_t begin : {int64_t{0}, int64_t{1}, kScanBlock - 1, kScanBlock}) {
            if (begin > size) continue;
            ASSERT_EQ(EqualRunEnd(v, begin, value), ScalarEqualRunEnd(v, begin, value))
                << "value " << value << " other " << other << " size " << size << " hit "
                << hit << " begin " << begin;
          }
        }
      }
    }
  }
}

TEST(ScanKernels, TrailingEqualRunStartStopsAtEveryOffset) {
  for (const int64_t value : {int64_t{0}, int64_t{1}}) {
    for (const int64_t other : {value + 1, int64_t{-1}, int64_t{2}}) {
      for (int64_t size = 0; size <= kLength; ++size) {
        for (int64_t hit = -1; hit < size; ++hit) {  // hit == -1: no hit at all
          std::vector<int64_t> v(size, value);
          if (hit >= 0) v[hit] = other;
          ASSERT_EQ(TrailingEqualRunStart(v, value), ScalarTrailingEqualRunStart(v, value))
              << "value " << value << " size " << size << " hit " << hit;
        }
      }
    }
  }
}

TEST(ScanKernels, BelowRunEndStopsAtEveryOffsetAndEveryKindOfBadValue) {
  const int64_t limit = 151652;  // the Qwen scanners' smallest marker
  for (const int64_t bad : {int64_t{-1}, limit, limit + 1, kMaxTokenId + 1,
                            std::numeric_limits<int64_t>::min(),
                            std::numeric_limits<int64_t>::max()}) {
    for (int64_t size = 0; size <= kLength; ++size) {
      for (int64_t hit = 0; hit <= size; ++hit) {
        std::vector<int64_t> v(size);
        for (int64_t i = 0; i < size; ++i) v[i] = (i * 7919) % limit;  // 0 and limit - 1 too
        if (size > 0) v[size - 1] = limit - 1;
        if (hit < size) v[hit] = bad;
        for (const int64_t begin : {int64_t{0}, int64_t{3}, kScanBlock}) {
          if (begin > size) continue;
          ASSERT_EQ(BelowRunEnd(v, begin, limit), ScalarBelowRunEnd(v, begin, limit))
              << "bad " << bad << " size " << size << " hit " << hit << " begin " << begin;
        }
      }
    }
  }
}

// A block is tested as four vectors of values kScanBlock / 4 apart: with two hits in one block,
// at any two offsets, every search still returns the first (and the trailing search the last).
TEST(ScanKernels, TwoHitsInABlockGiveTheFirst) {
  const int64_t size = 2 * kScanBlock;
  for (int64_t first = 0; first < size; ++first) {
    for (int64_t second = first + 1; second < size; ++second) {
      std::vector<int64_t> ones(size, 1);
      ones[first] = ones[second] = 2;
      ASSERT_EQ(EqualRunEnd(ones, 0, 1), first) << "hits " << first << ", " << second;
      ASSERT_EQ(TrailingEqualRunStart(ones, 1), second + 1) << "hits " << first << ", " << second;
      std::vector<int64_t> text(size, 7);
      text[first] = -1;
      text[second] = 151652;
      ASSERT_EQ(BelowRunEnd(text, 0, 151652), first) << "hits " << first << ", " << second;
    }
  }
}

TEST(ScanKernels, BelowRunEndAtTheEdgesOfTheLimit) {
  const std::vector<int64_t> zeros(2 * kScanBlock, 0);
  EXPECT_EQ(BelowRunEnd(zeros, 0, 0), 0);  // empty range: nothing is below 0
  EXPECT_EQ(BelowRunEnd(zeros, 5, -3), 5);
  EXPECT_EQ(BelowRunEnd(zeros, 0, 1), ScalarBelowRunEnd(zeros, 0, 1));
  const std::vector<int64_t> top(2 * kScanBlock, kMaxTokenId);
  EXPECT_EQ(BelowRunEnd(top, 0, kMaxTokenId + 1), ScalarBelowRunEnd(top, 0, kMaxTokenId + 1));
  EXPECT_EQ(BelowRunEnd(top, 0, kMaxTokenId), ScalarBelowRunEnd(top, 0, kMaxTokenId));
  const int64_t max = std::numeric_limits<int64_t>::max();
  const std::vector<int64_t> near_max(2 * kScanBlock + 1, max - 1);
  EXPECT_EQ(BelowRunEnd(near_max, 0, max), ScalarBelowRunEnd(near_max, 0, max));
}

}  // namespace
}  // namespace mrope
