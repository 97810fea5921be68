#ifndef MROPE_BENCHMARKS_CUT_STORES_H_
#define MROPE_BENCHMARKS_CUT_STORES_H_

// Store floors for prompts of many short spans: the packed output [3][total] cut into runs, each
// run written as one constant run by the fill's own kernel (FillConstant; a marker as one store),
// with no values to compute and no plan. Cut at the spans, these are the runs a writer that stores
// span by span issues at least; cut also at each grid span's markers and frames, the runs a writer
// that stores frame by frame issues at least (the fill writes every frame's rows on top). Where
// such a floor takes more than the memset of the same bytes, the stores' cost per run alone puts
// the writer above it (RESULTS.md, eighth round).

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "benchmark/benchmark.h"
#include "mrope/positions/fill_kernels.h"
#include "mrope/positions/sequence_positions.h"
#include "mrope/positions/span.h"

namespace mrope {

// Tokens [begin, begin + size) of the packed output, counted from its start.
struct StoreRun {
  int64_t begin = 0;
  int64_t size = 0;
};

enum class StoreCut {
  kSpans,   // a run per span and plane
  kFrames,  // image and video spans further cut at their markers and frames
};

// The runs of `rows` packed back to back, plane after plane.
inline std::vector<StoreRun> StoreRuns(absl::Span<const SequencePositions> rows, StoreCut cut) {
  int64_t total = 0;
  for (const SequencePositions& row : rows) total += row.num_tokens();
  std::vector<StoreRun> runs;
  for (int64_t plane = 0; plane < 3; ++plane) {
    int64_t row_start = plane * total;
    for (const SequencePositions& row : rows) {
      for (const PlacedSpan& span : row.spans()) {
        int64_t at = row_start + span.first_token;
        if (cut == StoreCut::kSpans || (span.span.kind != SpanKind::kImage &&
                                        span.span.kind != SpanKind::kVideo)) {
          runs.push_back({at, span.num_tokens});
          continue;
        }
        const Grid& grid = span.merged_grid;
        for (int32_t j = 0; j < span.start_markers; ++j) runs.push_back({at++, 1});
        for (int64_t k = 0; k < grid.t; ++k, at += grid.h * grid.w) {
          runs.push_back({at, grid.h * grid.w});
        }
        for (int32_t j = 0; j < span.end_markers; ++j) runs.push_back({at++, 1});
      }
      row_start += row.num_tokens();
    }
  }
  return runs;
}

// Times the runs of `rows` (3 * their tokens of Out), a new value at every iteration.
template <typename Out>
void CutStores(benchmark::State& state, absl::Span<const SequencePositions> rows, StoreCut cut) {
  const std::vector<StoreRun> runs = StoreRuns(rows, cut);
  int64_t total = 0;
  for (const StoreRun& run : runs) total += run.size;
  std::vector<Out> out(total);
  int round = 0;
  for (auto _ : state) {
    const Out value = static_cast<Out>(++round & 0x7f);
    for (const StoreRun& run : runs) {
      if (run.size == 1) {  // a marker: one store, as the fill writes it
        out[run.begin] = value;
      } else {
        FillConstant(out.data() + run.begin, run.size, value);
      }
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * (total / 3));
  state.counters["runs"] = static_cast<double>(runs.size());
}

}  // namespace mrope

#endif  // MROPE_BENCHMARKS_CUT_STORES_H_
