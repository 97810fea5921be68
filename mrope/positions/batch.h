#ifndef MROPE_POSITIONS_BATCH_H_
#define MROPE_POSITIONS_BATCH_H_

// Padded batches: token ids [B][L] + attention mask + the batch's media lists in, planar
// positions [3][B][L], per-row deltas and decode positions out, following HF get_rope_index +
// generate() of the config's convention (or vLLM's per-request one).

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mrope/positions/limits.h"
#include "mrope/positions/model_config.h"
#include "mrope/positions/position_buffer.h"
#include "mrope/positions/scanner.h"
#include "mrope/positions/sequence_positions.h"
#include "mrope/positions/vllm_evs.h"

namespace mrope {

struct SequentialGridPositions;  // mrope/positions/sequential_grid.h

// A padded batch as HF processors give it. It borrows the caller's memory: input_ids and
// attention_mask view buffers that the caller keeps alive (and unchanged) for the duration of
// every call given the batch; no plan or result refers to them afterwards. Callers that build
// the ids keep the vectors next to the batch (e.g. Prompt's owned_tokens in the service).
struct PromptBatch {
  int64_t batch_size = 0;
  int64_t seq_len = 0;
  absl::Span<const int64_t> input_ids;       // [B][L], row-major
  absl::Span<const int64_t> attention_mask;  // [B][L] of 0/1, or empty for all ones
  MediaInputs media;
  // [B][L]: 0 text, 1 image, 2 video (transformers 5.x processors), or empty. When given,
  // blocks are its runs (BatchScanner::ScanRowByTypes); conventions and families whose
  // get_rope_index reads it (hf_v5, ERNIE) require it.
  absl::Span<const int64_t> mm_token_type_ids;
};

// Where one row's real tokens sit in the padded batch, and how generation continues after them.
struct RowLayout {
  // Columns [first_column, first_column + n) hold the row's n real tokens when they are
  // contiguous (left or right padding); else scattered_columns lists their columns.
  int64_t first_column = 0;
  std::vector<int64_t> scattered_columns;
  // get_rope_index's second return: against the padded length L (HF VL) or the row's real
  // token count n (Omni, vLLM).
  double delta = 0;
  // What generation stores (rope_deltas) and adds to the cache position: under
  // DecodeRule::kCachePlusDelta decode step k has position decode_offset + k + decode_delta on
  // all axes, with decode_offset = L (HF: the cache position) or n (vLLM: the request length).
  // Omni stores delta - padding; HF v5.2 stores 0 for a batch without grids.
  double decode_delta = 0;
  int64_t decode_offset = 0;
  // Under DecodeRule::kPerAxisFromLast: the prompt's column L - 1 (t, h, w); decode step k has
  // last_column[a] + 1 + k on axis a.
  std::array<double, 3> last_column = {0, 0, 0};
  // Under DecodeRule::kTargetGridTable (GLM-Image): the row's generation targets, last first;
  // the table starts at decode_offset, the position after the prompt's last real token.
  std::vector<Grid> target_grids;
};

// The positions of a batch, planned: one SequencePositions and one RowLayout per row, plus the
// batch conventions.
struct BatchPlan {
  int64_t batch_size = 0;
  int64_t seq_len = 0;
  bool float_positions = false;
  // HF with no image/video grid in the batch: positions are cumsum(mask) - 1 (v4: the padding
  // slots count in each row's maximum, HF quirk 5).
  bool text_only_path = false;
  double pad_value = 1;               // what padding slots hold at prefill
  // What get_rope_index itself writes there: pad_value, except for HF v5.2's text-only batches,
  // which generate() prefills with 0 where GLM's and ERNIE's get_rope_index write 1.
  double rope_index_pad_value = 1;
  DecodeRule decode = DecodeRule::kCachePlusDelta;
  std::vector<SequencePositions> rows;  // each row's real tokens
  // An EVS-pruned vLLM request (one row, no padding): its positions, in place of rows.
  std::shared_ptr<const VllmEvsPositions> evs;
  // Planes of the positions: 3, or ModelConfig::num_axes under PositionScheme::kSequentialGrid,
  // whose [num_axes][B][L] positions are planned whole, in place of rows.
  int32_t num_axes = 3;
  std::shared_ptr<const SequentialGridPositions> sequential_grid;
  // Row by row, in one vector (one allocation, not one per field: a service call makes few).
  std::vector<RowLayout> layouts;
  // What it was planned under; FillDecode bounds its output by them before allocating.
  PositionLimits limits;
};

absl::StatusOr<BatchPlan> PlanBatch(const ModelConfig& config, const PromptBatch& batch,
                                    const PositionLimits& limits = {});
// The same under a planner's config and limits, validated once for all the calls that share it
// (a service's requests).
absl::StatusOr<BatchPlan> PlanBatch(const SequencePlanner& planner, const PromptBatch& batch);

// One delta per row in the output type, e.g. PerRowDeltas<int64_t>(plan, &RowLayout::delta):
// get_rope_index's [B] deltas. Integer types are only reached for integer positions (fills
// refuse float32 positions for them), where deltas are integers within the positions' range.
template <typename Out>
std::vector<Out> PerRowDeltas(const BatchPlan& plan, double RowLayout::*delta) {
  std::vector<Out> values;
  values.reserve(plan.layouts.size());
  for (const RowLayout& layout : plan.layouts) values.push_back(static_cast<Out>(layout.*delta));
  return values;
}

// A batch of sequences given as spans (runtimes that know where media sit), under the
// per-request convention: each row right-aligned in [3][B][max n], padding 0, each delta and
// decode offset against the sequence's own length.
absl::StatusOr<BatchPlan> PlanSequences(const ModelConfig& config,
                                        const std::vector<std::vector<Span>>& sequences,
                                        const PositionLimits& limits = {});
absl::StatusOr<BatchPlan> PlanSequences(const SequencePlanner& planner,
                                        const std::vector<std::vector<Span>>& sequences);

// Which padding value FillBatch writes.
enum class Padding {
  kPrefill,       // BatchPlan::pad_value: what reaches the rotary embedding
  kGetRopeIndex,  // BatchPlan::rope_index_pad_value: get_rope_index's first return
};

// Resizes `out` to num_axes * B * L and writes positions [num_axes][B][L] (planar: axis, then row, then
// column) into it. `out` is a std::vector<Out> or a PositionBuffer<Out> (which skips the
// zero-fill of the resize).
template <typename Out, typename Alloc>
absl::Status FillBatch(const BatchPlan& plan, std::vector<Out, Alloc>& out,
                       Padding padding = Padding::kPrefill);

// Resizes `out` to num_axes * B * steps and writes the positions of the next `steps` generated
// tokens, [num_axes][B][steps], into it. Refuses steps over plan.limits.max_decode_steps and B * steps over
// plan.limits.max_total_tokens.
template <typename Out, typename Alloc>
absl::Status FillDecode(const BatchPlan& plan, int64_t steps, std::vector<Out, Alloc>& out);

// The real tokens of row `row` of a plan (any scheme; not a vLLM EVS plan): their count n, and
// tokens [begin, end) of them by index (padding removed) into plan.num_axes planes, plane a at
// out + a * axis_stride. Indices at or beyond n are decode steps after the row's own tokens:
// index + the row's delta on every axis (SequencePositions::Fill), or under
// PositionScheme::kSequentialGrid its last real token + 1 + k axis by axis. Refuses what
// SequencePositions::Fill refuses (a bad window, more than max_decode_steps past n, values
// the output type cannot hold).
int64_t RowTokenCount(const BatchPlan& plan, int64_t row);
template <typename Out>
absl::Status FillRowTokens(const BatchPlan& plan, int64_t row, int64_t begin, int64_t end,
                           Out* out, int64_t axis_stride);

// Every row's real tokens back to back, [num_axes][total] with cu_seqlens at the row
// boundaries: PackSequences of the rows, for any scheme. Bounded by limits.max_total_tokens.
template <typename Out>
absl::StatusOr<PackedPositions<Out>> PackBatch(const BatchPlan& plan,
                                               const PositionLimits& limits = {});

}  // namespace mrope

#endif  // MROPE_POSITIONS_BATCH_H_
