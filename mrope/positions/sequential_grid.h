#ifndef MROPE_POSITIONS_SEQUENTIAL_GRID_H_
#define MROPE_POSITIONS_SEQUENTIAL_GRID_H_

// PositionScheme::kSequentialGrid (HunYuan-VL's XD-RoPE, transformers' HunYuanVLModel
// get_rope_index): ModelConfig::num_axes >= 3 planes. Every real token of a row takes its index
// among the row's real tokens on every axis; the grid tokens of an image take (column, row, image
// ordinal) on the last three axes instead, the grid being h / merge rows of w / merge + 1 columns
// (a row separator closes each row) and the ordinal counting the batch's images from 0. An image
// is a run of mm_token_type_ids 1: its grid tokens alone, or its grid between two tokens that
// keep their index (the processor's begin and end tokens). Padding slots hold 0; decode step k
// takes the prompt's last column + 1 + k, axis by axis (generate()).

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/position_buffer.h"
#include "mrope/positions/sequence_positions.h"

namespace mrope {

// An image of the batch: its run's real-token indices [first, end) in its row, its grid.
struct GridImage {
  int64_t row = 0;
  int64_t first = 0;
  int64_t end = 0;
  int64_t grid_rows = 0;
  int64_t grid_columns = 0;  // w / merge + 1: the row separator included
};

struct SequentialGridPositions {
  int32_t num_axes = 3;
  PositionBuffer<int64_t> positions;  // [num_axes][B][L]
  std::vector<GridImage> images;      // in batch order: image i has ordinal i
  std::vector<int64_t> row_tokens;    // [B]: each row's real tokens (columns: its RowLayout)
};

// Plans a padded batch under the scheme (PlanBatch's path for it; the shape and mask are
// checked). Refuses type ids other than 0 and 1, image tokens not typed 1 and typed tokens that
// are not the image token, runs whose length fits neither form of their grid, grids with t != 1
// or sides that are not positive multiples of the merge size, and runs and grids that do not
// pair up; each error names the row and column, or the grid's index.
absl::StatusOr<BatchPlan> PlanSequentialGridBatch(const SequencePlanner& planner,
                                                  const PromptBatch& batch);

// FillBatch and FillDecode of such a plan: [num_axes][B][L] and [num_axes][B][steps].
template <typename Out, typename Alloc>
absl::Status FillSequentialGrid(const BatchPlan& plan, std::vector<Out, Alloc>& out);
template <typename Out, typename Alloc>
absl::Status FillSequentialGridDecode(const BatchPlan& plan, int64_t steps,
                                      std::vector<Out, Alloc>& out);
// FillRowTokens of such a plan (batch.h): past the row's n real tokens, token n + k takes the
// row's last real token + 1 + k, axis by axis (its decode step k when that token ends the row).
template <typename Out>
absl::Status FillSequentialGridRow(const BatchPlan& plan, int64_t row, int64_t begin,
                                   int64_t end, Out* out, int64_t axis_stride);

}  // namespace mrope

#endif  // MROPE_POSITIONS_SEQUENTIAL_GRID_H_
