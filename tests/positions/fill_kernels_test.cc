// FillConstant and FillCounting against their definitions at every length from 0 to 70 and
// every start offset within a 64-byte line (the kernels store a first block, aligned blocks and
// an overlapping last block; runs shorter than a block, two overlapping half blocks or single
// values). FillGridRows against its definition: every width from 0 to 40 (the periodic sweep
// of narrow frames below 10, rows in blocks of 8 with an overlapping last block from 10 on, of
// 16 from 16 on for 4-byte outputs), 0 to 20 rows, every output type. Float outputs of integer
// values count in int32 lanes when every value fits int32, in int64 otherwise: runs on both
// sides of that bound and across it. Buffers are exactly as long as the run, so a store past
// it fails under ASan.

#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "mrope/positions/fill_kernels.h"

namespace mrope {
namespace {

template <typename T, typename Fill, typename ValueAt>
void ExpectGridRows(Fill fill, ValueAt value_at) {
  for (int64_t width = 0; width <= 40; ++width) {  // width 0: rows of no token, nothing written
    // Narrow frames repeat their pattern every 8 rows (lcm(8, width) tokens): up to 2.5 periods.
    for (int64_t rows = 0; rows <= 20; ++rows) {
      const int64_t first_row = 3 * width;  // rows need not start at 0 (a window's cut)
      std::vector<T> h(rows * width);
      std::vector<T> w(rows * width);
      fill(h.data(), w.data(), rows, width, first_row);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < width; ++c) {
          ASSERT_EQ(h[r * width + c], value_at(first_row + r))
              << "width " << width << " row " << r << " col " << c;
          ASSERT_EQ(w[r * width + c], value_at(c))
              << "width " << width << " row " << r << " col " << c;
        }
      }
    }
  }
}

// Calls fill(out, n) on n entries starting `offset` entries into an exact-size buffer, for every
// n and offset, and checks out[i] == value_at(i).
template <typename T, typename Fill, typename ValueAt>
void ExpectRuns(Fill fill, ValueAt value_at) {
  for (int64_t offset = 0; offset < 16; ++offset) {
    for (int64_t n = 0; n <= 70; ++n) {
      std::vector<T> buffer(offset + n);
      fill(buffer.data() + offset, n);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(buffer[offset + i], value_at(i))
            << "offset " << offset << " n " << n << " i " << i;
      }
    }
  }
}

TEST(FillRuns, ConstantIsTheValueEverywhere) {
  ExpectRuns<int64_t>([](int64_t* out, int64_t n) { FillConstant(out, n, int64_t{-7}); },
                      [](int64_t) { return int64_t{-7}; });
  ExpectRuns<int32_t>([](int32_t* out, int64_t n) { FillConstant(out, n, 123456); },
                      [](int64_t) { return 123456; });
  ExpectRuns<float>([](float* out, int64_t n) { FillConstant(out, n, 2.5f); },
                    [](int64_t) { return 2.5f; });
}

TEST(FillRuns, CountingIsFirstPlusIndex) {
  const int64_t first = (int64_t{1} << 40) + 3;
  ExpectRuns<int64_t>([&](int64_t* out, int64_t n) { FillCounting(out, n, first); },
                      [&](int64_t i) { return first + i; });
  ExpectRuns<int32_t>([](int32_t* out, int64_t n) { FillCounting(out, n, 1000003); },
                      [](int64_t i) { return static_cast<int32_t>(1000003 + i); });
  const int64_t large = (int64_t{1} << 24) + 1;  // float(large + i) rounds once
  ExpectRuns<float>([&](float* out, int64_t n) { FillCounting(out, n, large); },
                    [&](int64_t i) { return static_cast<float>(large + i); });
  ExpectRuns<float>([](float* out, int64_t n) { FillCountingFloat32(out, n, 0.25f, 1000); },
                    [](int64_t i) { return 0.25f + static_cast<float>(1000 + i); });
}

// Float outputs count in int32 lanes only where every value fits: runs past INT32_MAX (some
// lengths cross it), below INT32_MIN, and far outside take the int64 path, with the same
// values.
TEST(FillRuns, FloatCountingOnBothSidesOfTheInt32Range) {
  const int64_t int32_max = std::numeric_limits<int32_t>::max();
  const int64_t int32_min = std::numeric_limits<int32_t>::min();
  for (const int64_t first : {int32_max - 35, int32_min - 20, int32_min, int64_t{-5},
                              (int64_t{1} << 40) + 3}) {
    SCOPED_TRACE(first);
    ExpectRuns<float>([&](float* out, int64_t n) { FillCounting(out, n, first); },
                      [&](int64_t i) { return static_cast<float>(first + i); });
    ExpectRuns<float>(
        [&](float* out, int64_t n) { FillCountingFloat32(out, n, 0.5f, first); },
        [&](int64_t i) { return 0.5f + static_cast<float>(first + i); });
  }
}

TEST(FillGridRows, Int64IsBasePlusRowAndBasePlusColumn) {
  const int64_t base = (int64_t{1} << 40) + 7;
  ExpectGridRows<int64_t>(
      [&](int64_t* h, int64_t* w, int64_t rows, int64_t width, int64_t first_row) {
        FillGridRows(h, w, rows, width, first_row, base);
      },
      [&](int64_t x) { return base + x; });
}

TEST(FillGridRows, Int32IsBasePlusRowAndBasePlusColumn) {
  const int32_t base = 1000003;
  ExpectGridRows<int32_t>(
      [&](int32_t* h, int32_t* w, int64_t rows, int64_t width, int64_t first_row) {
        FillGridRows(h, w, rows, width, first_row, base);
      },
      [&](int64_t x) { return static_cast<int32_t>(base + x); });
}

TEST(FillGridRows, FloatOfIntegerPositionsRoundsTheIntegerSumOnce) {
  const int64_t base = (int64_t{1} << 24) + 1;  // sums above 2^24 round to even in float32
  ExpectGridRows<float>(
      [&](float* h, float* w, int64_t rows, int64_t width, int64_t first_row) {
        FillGridRows(h, w, rows, width, first_row, base);
      },
      [&](int64_t x) { return static_cast<float>(base + x); });
}

TEST(FillGridRows, FloatOfIntegerPositionsOnBothSidesOfTheInt32Range) {
  // Rows reach base + 140 (first row 3 * width, up to 20 rows, width up to 40).
  for (const int64_t base : {int64_t{std::numeric_limits<int32_t>::max()} - 100,
                             (int64_t{1} << 40) + 7}) {
    SCOPED_TRACE(base);
    ExpectGridRows<float>(
        [&](float* h, float* w, int64_t rows, int64_t width, int64_t first_row) {
          FillGridRows(h, w, rows, width, first_row, base);
        },
        [&](int64_t x) { return static_cast<float>(base + x); });
  }
}

TEST(FillGridRowsFloat32, AddsInFloat32) {
  const float base = 1000.25f;  // float32 positions are fractional (Qwen3-Omni)
  ExpectGridRows<float>(
      [&](float* h, float* w, int64_t rows, int64_t width, int64_t first_row) {
        FillGridRowsFloat32(h, w, rows, width, first_row, base);
      },
      [&](int64_t x) { return base + static_cast<float>(x); });
}

}  // namespace
}  // namespace mrope
