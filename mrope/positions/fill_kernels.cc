#include "mrope/positions/fill_kernels.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "mrope/positions/cpu_clones.h"

namespace mrope {
namespace {

// out[i] = value_at(block, lane) for i = block + lane, in 64-byte blocks the compiler
// vectorises (a constant trip count; GCC's cheap cost model rejects the plain loop). The first
// block is stored where `out` starts, then blocks aligned to 64 bytes, then one ending at n
// (overlapping its predecessor), as memset does: no store splits a cache line but the two
// outer ones, and there is no scalar loop for n >= one block. value_at must be a cheap function;
// taking the block start and the lane separately lets counting runs add the lane in T (an int64
// index narrowed to int32 lane by lane cost twice the stores).
template <typename T, typename ValueAt>
MROPE_CLONE_INLINE void Blocked(T* out, int64_t n, ValueAt value_at) {
  constexpr int64_t kBlock = 64 / sizeof(T);
  constexpr int64_t kHalf = kBlock / 2;
  const auto block = [&](int64_t start) {
    for (int64_t lane = 0; lane < kBlock; ++lane) out[start + lane] = value_at(start, lane);
  };
  if (n < kBlock) {
    // Short runs (text between frames, markers): two overlapping half blocks when they fit.
    if (n >= kHalf) {
      for (int64_t start : {int64_t{0}, n - kHalf}) {
        for (int64_t lane = 0; lane < kHalf; ++lane) out[start + lane] = value_at(start, lane);
      }
      return;
    }
    for (int64_t i = 0; i < n; ++i) out[i] = value_at(i, 0);
    return;
  }
  block(0);
  int64_t i = (kBlock - reinterpret_cast<uintptr_t>(out) / sizeof(T) % kBlock) % kBlock;
  for (; i + kBlock <= n; i += kBlock) block(i);
  if (i < n) block(n - kBlock);
}

// Whole rows of a grid frame (see FillGridRows), both planes in one pass over the rows, in
// blocks of kBlock tokens (width >= kBlock): the last block of a row overlaps the one before, so
// no row has a scalar tail.
template <int64_t kBlock, typename T, typename ValueAt>
MROPE_CLONE_INLINE void GridRowsInBlocks(T* __restrict h, T* __restrict w, int64_t rows,
                                         int64_t width, int64_t first_row, ValueAt value_at) {
  // Columns in 32-bit lanes for 32-bit outputs (an int64 column narrowed lane by lane cost
  // more than the stores); widths are far below 2^31.
  using Column = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  const Column last = static_cast<Column>(width - kBlock);  // the last block's first column
  for (int64_t r = 0; r < rows; ++r) {
    const T row_value = value_at(first_row + r);
    T* __restrict h_row = h + r * width;
    T* __restrict w_row = w + r * width;
    for (Column c = 0;; c += kBlock) {
      c = std::min(c, last);
      for (Column j = 0; j < kBlock; ++j) {
        h_row[c + j] = row_value;
        w_row[c + j] = value_at(c + j);
      }
      if (c == last) break;
    }
  }
}

// Blocks of 8 for wide rows, of 4 for the narrow rows of small images (4-7 tokens after the
// merge), tokens one by one below that.
template <typename T, typename ValueAt>
MROPE_CLONE_INLINE void GridRows(T* __restrict h, T* __restrict w, int64_t rows, int64_t width,
                                 int64_t first_row, ValueAt value_at) {
  if (width >= 8) return GridRowsInBlocks<8>(h, w, rows, width, first_row, value_at);
  if (width >= 4) return GridRowsInBlocks<4>(h, w, rows, width, first_row, value_at);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < width; ++c) {
      h[r * width + c] = value_at(first_row + r);
      w[r * width + c] = value_at(c);
    }
  }
}

}  // namespace

MROPE_CPU_CLONES void FillConstant(int64_t* out, int64_t n, int64_t value) {
  Blocked(out, n, [value](int64_t, int64_t) { return value; });
}
MROPE_CPU_CLONES void FillConstant(int32_t* out, int64_t n, int32_t value) {
  Blocked(out, n, [value](int64_t, int64_t) { return value; });
}
MROPE_CPU_CLONES void FillConstant(float* out, int64_t n, float value) {
  Blocked(out, n, [value](int64_t, int64_t) { return value; });
}

MROPE_CPU_CLONES void FillCounting(int64_t* out, int64_t n, int64_t first) {
  Blocked(out, n, [first](int64_t start, int64_t lane) { return first + start + lane; });
}
MROPE_CPU_CLONES void FillCounting(int32_t* out, int64_t n, int32_t first) {
  Blocked(out, n, [first](int64_t start, int64_t lane) {
    return (first + static_cast<int32_t>(start)) + static_cast<int32_t>(lane);
  });
}
MROPE_CPU_CLONES void FillCounting(float* out, int64_t n, int64_t first) {
  Blocked(out, n, [first](int64_t start, int64_t lane) {
    return static_cast<float>(first + start + lane);
  });
}
MROPE_CPU_CLONES void FillCountingFloat32(float* out, int64_t n, float base, int64_t offset) {
  Blocked(out, n, [base, offset](int64_t start, int64_t lane) {
    return base + static_cast<float>(offset + start + lane);
  });
}

MROPE_CPU_CLONES void FillGridRows(int64_t* h, int64_t* w, int64_t rows, int64_t width,
                                   int64_t first_row, int64_t base) {
  GridRows(h, w, rows, width, first_row, [base](int64_t x) { return base + x; });
}
MROPE_CPU_CLONES void FillGridRows(int32_t* h, int32_t* w, int64_t rows, int64_t width,
                                   int64_t first_row, int32_t base) {
  GridRows(h, w, rows, width, first_row,
           [base](int64_t x) { return base + static_cast<int32_t>(x); });
}
MROPE_CPU_CLONES void FillGridRows(float* h, float* w, int64_t rows, int64_t width,
                                   int64_t first_row, int64_t base) {
  GridRows(h, w, rows, width, first_row,
           [base](int64_t x) { return static_cast<float>(base + x); });
}
MROPE_CPU_CLONES void FillGridRowsFloat32(float* h, float* w, int64_t rows, int64_t width,
                                          int64_t first_row, float base) {
  GridRows(h, w, rows, width, first_row,
           [base](int64_t x) { return base + static_cast<float>(x); });
}

}  // namespace mrope
