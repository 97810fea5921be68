// FillGridRows against its definition: every width from 1 to 40 (below, at and above the
// kernel's block of 8, so both the scalar rows and the overlapping last block are reached),
// 0 to 4 rows, every output type. Buffers are exactly rows * width long, so a store past a row
// or past the frame fails under ASan.

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "mrope/positions/fill_kernels.h"

namespace mrope {
namespace {

template <typename T, typename Fill, typename ValueAt>
void ExpectGridRows(Fill fill, ValueAt value_at) {
  for (int64_t width = 1; width <= 40; ++width) {
    for (int64_t rows = 0; rows <= 4; ++rows) {
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
