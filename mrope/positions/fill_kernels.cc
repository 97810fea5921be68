#include "mrope/positions/fill_kernels.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
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
      // (Not a loop over {0, n - kHalf}: GCC stored that list on the stack at every call.)
      const auto half = [&](int64_t start) {
        for (int64_t lane = 0; lane < kHalf; ++lane) out[start + lane] = value_at(start, lane);
      };
      half(0);
      half(n - kHalf);
      return;
    }
    for (int64_t i = 0; i < n; ++i) out[i] = value_at(i, 0);
    return;
  }
  block(0);
  int64_t i = (kBlock - reinterpret_cast<uintptr_t>(out) / sizeof(T) % kBlock) % kBlock;
  for (; i + kBlock <= n; i += kBlock) block(i);
  if (std::max(i, kBlock) < n) block(n - kBlock);  // (covered so far: [0, max(i, kBlock)))
}

// Tokens per block of the periodic sweep, and of rows too narrow for a 64-byte block of their
// values (4-byte values in rows 10-15 tokens wide).
constexpr int64_t kLanes = 8;

// Whole rows of a grid frame (see FillGridRows), both planes in one pass over the rows, in
// blocks of kRowLanes tokens (width >= kRowLanes): the last block of a row overlaps the one
// before, so no row has a scalar tail.
template <int64_t kRowLanes, typename T, typename ValueAt>
MROPE_CLONE_INLINE void GridRowsInBlocks(T* __restrict h, T* __restrict w, int64_t rows,
                                         int64_t width, int64_t first_row, ValueAt value_at) {
  // Columns in 32-bit lanes for 32-bit outputs (an int64 column narrowed lane by lane cost
  // more than the stores); widths are far below 2^31.
  using Column = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  const Column last = static_cast<Column>(width - kRowLanes);  // the last block's first column
  for (int64_t r = 0; r < rows; ++r) {
    const T row_value = value_at(first_row + r);
    T* __restrict h_row = h + r * width;
    T* __restrict w_row = w + r * width;
    for (Column c = 0;; c += kRowLanes) {
      c = std::min(c, last);
      for (Column j = 0; j < kRowLanes; ++j) {
        h_row[c + j] = row_value;
        w_row[c + j] = value_at(c + j);
      }
      if (c == last) break;
    }
  }
}

// Narrow frames (width < kPeriodicWidths: the small images and videos of a batch) are written
// as one sweep of kLanes-token blocks over the whole frame instead of row by row: the (row,
// column) pattern of the frame's tokens repeats every lcm(kLanes, width) tokens, so a table of
// one period (and a block more, to read a block at any phase) gives each block's row offsets
// and columns, with no loop per row and no division per block. Rows of 5-9 tokens cost 1.2-1.6x
// less so; from 12 tokens on the rows' own blocks are cheaper.
constexpr int64_t kPeriodicWidths = 10;
constexpr int64_t kMaxPeriod = 72;  // lcm(8, 9)

// Table entries in the lanes' type (int64 for 8-byte outputs, int32 for 4-byte ones): narrower
// entries would not be vectorised.
template <typename Entry>
struct PeriodTable {
  int64_t period = 0;                   // lcm(kLanes, width) tokens: period / width rows
  Entry row[kMaxPeriod + kLanes] = {};  // token j of a period is in row row[j]
  Entry col[kMaxPeriod + kLanes] = {};  // and column col[j]
};

template <typename Entry>
constexpr std::array<PeriodTable<Entry>, kPeriodicWidths> MakePeriodTables() {
  std::array<PeriodTable<Entry>, kPeriodicWidths> tables{};
  for (int64_t width = 1; width < kPeriodicWidths; ++width) {
    PeriodTable<Entry>& table = tables[width];
    table.period = kLanes;
    while (table.period % width != 0) table.period += kLanes;
    for (int64_t j = 0; j < table.period + kLanes; ++j) {
      table.row[j] = static_cast<Entry>(j / width);
      table.col[j] = static_cast<Entry>(j % width);
    }
  }
  return tables;
}
template <typename Entry>
constexpr std::array<PeriodTable<Entry>, kPeriodicWidths> kPeriodTables =
    MakePeriodTables<Entry>();

// One block of a periodic sweep: tokens at `phase` of a period that starts in row `row`.
template <typename T, typename Entry, typename ValueAt>
MROPE_CLONE_INLINE void PeriodicBlock(T* __restrict h, T* __restrict w,
                                      const PeriodTable<Entry>& table, int64_t phase,
                                      int64_t row, ValueAt value_at) {
  const Entry period_row = static_cast<Entry>(row);  // rows are far below 2^31
  for (int64_t lane = 0; lane < kLanes; ++lane) {
    h[lane] = value_at(period_row + table.row[phase + lane]);
    w[lane] = value_at(table.col[phase + lane]);
  }
}

template <typename T, typename ValueAt>
MROPE_CLONE_INLINE void GridRowsPeriodic(T* __restrict h, T* __restrict w, int64_t rows,
                                         int64_t width, int64_t first_row, ValueAt value_at) {
  using Entry = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  const PeriodTable<Entry>& table = kPeriodTables<Entry>[width];
  const int64_t n = rows * width;
  if (n < kLanes) {  // (also no rows, or rows of no token)
    for (int64_t i = 0; i < n; ++i) {
      h[i] = value_at(first_row + table.row[i]);
      w[i] = value_at(table.col[i]);
    }
    return;
  }
  const int64_t rows_per_period = table.period / width;
  int64_t phase = 0;
  int64_t row = first_row;
  int64_t start = 0;
  for (; start + kLanes <= n; start += kLanes) {
    PeriodicBlock(h + start, w + start, table, phase, row, value_at);
    phase += kLanes;
    if (phase == table.period) {
      phase = 0;
      row += rows_per_period;
    }
  }
  if (start < n) {  // a last block overlapping the one before: one division per frame
    start = n - kLanes;
    PeriodicBlock(h + start, w + start, table, start % table.period,
                  first_row + start / table.period * rows_per_period, value_at);
  }
}

// Row by row from width kPeriodicWidths on, as periodic sweeps below that. Rows of 4-byte values
// at least 16 wide take 64-byte blocks of 16 tokens: half the stores of 8-token blocks (int32
// and float fills 8-21% faster on the large prompts).
template <typename T, typename ValueAt>
MROPE_CLONE_INLINE void GridRows(T* __restrict h, T* __restrict w, int64_t rows, int64_t width,
                                 int64_t first_row, ValueAt value_at) {
  constexpr int64_t kFullLanes = 64 / sizeof(T);  // 8 for int64: kLanes
  if (width >= kFullLanes) {
    return GridRowsInBlocks<kFullLanes>(h, w, rows, width, first_row, value_at);
  }
  if (width >= kPeriodicWidths) {
    return GridRowsInBlocks<kLanes>(h, w, rows, width, first_row, value_at);
  }
  GridRowsPeriodic(h, w, rows, width, first_row, value_at);
}

// Whether first + i fits int32 for every i in [0, n) (n >= 0). Float outputs then count in int32
// lanes: int64 to float has no vector instruction below AVX-512DQ (GCC converts one value at a
// time, with scalar stores), int32 to float has. The float is the same: both convert the same
// integer, rounding once.
MROPE_CLONE_INLINE bool CountsInInt32(int64_t first, int64_t n) {
  constexpr int64_t kMin = std::numeric_limits<int32_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  return first >= kMin && first <= kMax && n <= kMax - first + 1;
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
  if (CountsInInt32(first, n)) {
    const int32_t first32 = static_cast<int32_t>(first);
    Blocked(out, n, [first32](int64_t start, int64_t lane) {
      return static_cast<float>((first32 + static_cast<int32_t>(start)) +
                                static_cast<int32_t>(lane));
    });
    return;
  }
  Blocked(out, n, [first](int64_t start, int64_t lane) {
    return static_cast<float>(first + start + lane);
  });
}
MROPE_CPU_CLONES void FillCountingFloat32(float* out, int64_t n, float base, int64_t offset) {
  if (CountsInInt32(offset, n)) {
    const int32_t offset32 = static_cast<int32_t>(offset);
    Blocked(out, n, [base, offset32](int64_t start, int64_t lane) {
      return base + static_cast<float>((offset32 + static_cast<int32_t>(start)) +
                                       static_cast<int32_t>(lane));
    });
    return;
  }
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
  // Values base + x for x in [0, max(first_row + rows, width)): rows and columns.
  if (first_row >= 0 && CountsInInt32(base, std::max(first_row + rows, width))) {
    const int32_t base32 = static_cast<int32_t>(base);
    GridRows(h, w, rows, width, first_row,
             [base32](int32_t x) { return static_cast<float>(base32 + x); });
    return;
  }
  GridRows(h, w, rows, width, first_row,
           [base](int64_t x) { return static_cast<float>(base + x); });
}
MROPE_CPU_CLONES void FillGridRowsFloat32(float* h, float* w, int64_t rows, int64_t width,
                                          int64_t first_row, float base) {
  GridRows(h, w, rows, width, first_row,
           [base](int64_t x) { return base + static_cast<float>(x); });
}

}  // namespace mrope
