#include "mrope/positions/batch.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "mrope/common/status_macros.h"
#include "mrope/positions/fill_kernels.h"
#include "mrope/positions/internal/pack_rows.h"
#include "mrope/positions/position_arithmetic.h"
#include "mrope/positions/scan_kernels.h"
#include "mrope/positions/sequential_grid.h"

namespace mrope {
namespace {

absl::Status CheckShape(const PromptBatch& batch, const PositionLimits& limits) {
  const int64_t b = batch.batch_size;
  const int64_t l = batch.seq_len;
  if (b < 1 || b > limits.max_batch_rows) {
    return absl::InvalidArgumentError(absl::StrCat("batch_size must be in [1, max_batch_rows = ",
                                                   limits.max_batch_rows, "], got ", b));
  }
  if (l < 1 || l > limits.max_tokens_per_row) {
    return absl::InvalidArgumentError(absl::StrCat("seq_len must be in [1, max_tokens_per_row = ",
                                                   limits.max_tokens_per_row, "], got ", l));
  }
  if (b * l > limits.max_total_tokens) {
    return absl::InvalidArgumentError(absl::StrCat("batch of ", b, " x ", l, " = ", b * l,
                                                   " tokens exceeds max_total_tokens = ",
                                                   limits.max_total_tokens));
  }
  if (static_cast<int64_t>(batch.input_ids.size()) != b * l) {
    return absl::InvalidArgumentError(absl::StrCat("input_ids has ", batch.input_ids.size(),
                                                   " entries, expected ", b, " x ", l));
  }
  for (const auto& [name, values] :
       {std::make_pair("attention_mask", batch.attention_mask),
        std::make_pair("mm_token_type_ids", batch.mm_token_type_ids)}) {
    if (!values.empty() && static_cast<int64_t>(values.size()) != b * l) {
      return absl::InvalidArgumentError(absl::StrCat(name, " has ", values.size(),
                                                     " entries, expected the shape of input_ids [",
                                                     b, "][", l, "]"));
    }
  }
  return absl::OkStatus();
}

// Where a row's real tokens sit: columns [first, last), every one of them real when contiguous
// (else the mask has holes between first and last).
struct RealColumns {
  int64_t first = 0;
  int64_t last = 0;
  bool contiguous = true;
};

// Each row's real columns, and the mask's 0/1 check, reading every mask value once: the left
// padding is a run of 0 from the start, the right padding a run of 0 from the end, and a run of
// 1 between them proves the whole row. Only a row where that run stops early (a hole, or a bad
// value) is read again, to tell the two apart. Rows are checked in order, so the reported value
// is the first bad one of the batch.
absl::StatusOr<std::vector<RealColumns>> FindRealColumns(const PromptBatch& batch) {
  const int64_t l = batch.seq_len;
  std::vector<RealColumns> rows(batch.batch_size, RealColumns{0, l, true});
  if (batch.attention_mask.empty()) return rows;
  for (int64_t row = 0; row < batch.batch_size; ++row) {
    const absl::Span<const int64_t> mask(batch.attention_mask.data() + row * l, l);
    RealColumns& real = rows[row];
    real.first = EqualRunEnd(mask, 0, 0);
    real.last = real.first + TrailingEqualRunStart(mask.subspan(real.first), 0);
    if (EqualRunEnd(mask.first(real.last), real.first, 1) == real.last) continue;
    const int64_t bad = BelowRunEnd(mask.first(real.last), real.first, 2);
    if (bad != real.last) {
      return absl::InvalidArgumentError(absl::StrCat("attention_mask[", row, "][", bad,
                                                     "] must be 0 or 1, got ", mask[bad]));
    }
    real.contiguous = false;
  }
  return rows;
}

// The prompt's last column, [3] positions of column L - 1: the row's last real token, or a
// padding slot (a right-padded row decodes from the padding value).
absl::Status SetLastColumn(const BatchPlan& plan, const SequencePositions& seq, int64_t l,
                           RowLayout& layout) {
  const int64_t n = seq.num_tokens();
  const int64_t last_real = layout.scattered_columns.empty() ? layout.first_column + n - 1
                                                             : layout.scattered_columns.back();
  if (n == 0 || last_real != l - 1) {
    layout.last_column = {plan.pad_value, plan.pad_value, plan.pad_value};
    return absl::OkStatus();
  }
  if (plan.float_positions) {
    float t = 0, h = 0, w = 0;
    MROPE_RETURN_IF_ERROR(seq.Fill<float>(n - 1, n, {&t, &h, &w}));
    layout.last_column = {t, h, w};
  } else {
    int64_t t = 0, h = 0, w = 0;
    MROPE_RETURN_IF_ERROR(seq.Fill<int64_t>(n - 1, n, {&t, &h, &w}));
    layout.last_column = {static_cast<double>(t), static_cast<double>(h),
                          static_cast<double>(w)};
  }
  return absl::OkStatus();
}

// GLM-Image: images_per_sample has one count per row, and they cover image_grid_thw.
absl::Status CheckImagesPerSample(const PromptBatch& batch, const PositionPolicy& policy) {
  const std::vector<int64_t>& counts = batch.media.images_per_sample;
  if (policy.decode != DecodeRule::kTargetGridTable) {
    if (counts.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(
        "images_per_sample is read by GLM-Image only (its generation targets)");
  }
  if (static_cast<int64_t>(counts.size()) != batch.batch_size) {
    return absl::InvalidArgumentError(absl::StrCat("images_per_sample has ", counts.size(),
                                                   " entries, expected one per row (",
                                                   batch.batch_size, ")"));
  }
  const int64_t grids = batch.media.image_grid_thw.size();
  int64_t total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 0 || counts[i] > grids - total) {
      return absl::InvalidArgumentError(absl::StrCat(
          "images_per_sample[", i, "] = ", counts[i], ": the counts must be >= 0 and sum to ",
          "the ", grids, " entries of image_grid_thw"));
    }
    total += counts[i];
  }
  if (total != grids) {
    return absl::InvalidArgumentError(absl::StrCat("images_per_sample sums to ", total,
                                                   " but image_grid_thw has ", grids,
                                                   " entries"));
  }
  return absl::OkStatus();
}

// GLM-Image: the row's grids past its source images (consumed by the scan from `first_image`)
// are its generation targets; takes them from the cursor, last first, into the layout.
absl::Status TakeTargetGrids(const MediaInputs& media, int64_t row, size_t first_image,
                             MediaCursor& cursor, RowLayout& layout) {
  const int64_t sources = cursor.image - first_image;
  const int64_t count = media.images_per_sample[row];
  if (sources > count) {
    return absl::InvalidArgumentError(absl::StrCat("row ", row, " has ", sources,
                                                   " source images but images_per_sample[",
                                                   row, "] = ", count));
  }
  for (int64_t i = 0; i < count - sources; ++i) {
    const Grid& g = media.image_grid_thw[cursor.image + i];
    if (g.t != 1 || g.h < 1 || g.w < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "image_grid_thw[", cursor.image + i, "] = [", g.t, ", ", g.h, ", ", g.w,
          "]: a generation target must be [1, h, w] with h, w >= 1"));
    }
  }
  const auto first = media.image_grid_thw.begin() + cursor.image;
  layout.target_grids.assign(first, first + (count - sources));
  std::reverse(layout.target_grids.begin(), layout.target_grids.end());
  cursor.image += count - sources;
  return absl::OkStatus();
}

// Where the token after the sequence would be: its last span's continuation.
double NextPosition(const SequencePositions& seq) {
  if (seq.spans().empty()) return 0;
  const PlacedSpan& last = seq.spans().back();
  if (last.span.kind == SpanKind::kText) return last.start_base + last.num_tokens;
  return last.end_markers > 0 ? last.end_base + last.end_markers : last.end_base;
}

// GLM-Image's decode step k of `layout`'s target table (the last entry past its end).
std::array<double, 3> TargetTableStep(const RowLayout& layout, int64_t k) {
  double dp = static_cast<double>(layout.decode_offset);
  for (const Grid& g : layout.target_grids) {
    const int64_t n = g.h * g.w;
    if (k < n) {
      return {dp, dp + static_cast<double>(k / g.w), dp + static_cast<double>(k % g.w)};
    }
    k -= n;
    dp += static_cast<double>(std::max(g.h, g.w));
  }
  return {dp, dp, dp};
}

bool HasGrids(const MediaInputs& media) {
  return !media.image_grid_thw.empty() || !media.video_grid_thw.empty();
}

// Room for b rows in the plan's per-row vectors (rows are large to move).
void ReserveRows(int64_t b, BatchPlan& plan) {
  plan.rows.reserve(b);
  plan.layouts.reserve(b);
}

// A new row of the plan, a copy of an empty one: value-initialising it (emplace_back())
// zero-fills it with rep stos before storing its defaults, ~5 ns more per row.
SequencePositions& AddRow(BatchPlan& plan) {
  static const SequencePositions* const kEmptyRow = new SequencePositions();
  return plan.rows.emplace_back(*kEmptyRow);
}

}  // namespace

absl::StatusOr<BatchPlan> PlanBatch(const ModelConfig& config, const PromptBatch& batch,
                                    const PositionLimits& limits) {
  MROPE_ASSIGN_OR_RETURN(const SequencePlanner planner, SequencePlanner::Create(config, limits));
  return PlanBatch(planner, batch);
}

absl::StatusOr<BatchPlan> PlanBatch(const SequencePlanner& planner, const PromptBatch& batch) {
  const ModelConfig& config = planner.config();
  const PositionLimits& limits = planner.limits();
  MROPE_RETURN_IF_ERROR(CheckShape(batch, limits));
  const PositionPolicy& policy = planner.policy();
  if (policy.scheme == PositionScheme::kSequentialGrid) {
    return PlanSequentialGridBatch(planner, batch);
  }
  MROPE_ASSIGN_OR_RETURN(const std::vector<RealColumns> real_columns, FindRealColumns(batch));
  MROPE_RETURN_IF_ERROR(ValidateMediaInputs(config, policy, batch.media, limits));
  MROPE_RETURN_IF_ERROR(CheckImagesPerSample(batch, policy));
  const bool typed = (!batch.mm_token_type_ids.empty() && !policy.type_ids_unread) ||
                     policy.blocks_from_media_runs;
  if (policy.blocks_from_type_ids && batch.mm_token_type_ids.empty() && HasGrids(batch.media)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mm_token_type_ids is required: ", config.rules->name, " under ",
        ConventionRulesOf(config.convention).name, " finds blocks from it"));
  }
  const bool fp = policy.float_positions;

  BatchPlan plan;
  plan.limits = limits;
  plan.batch_size = batch.batch_size;
  plan.seq_len = batch.seq_len;
  plan.float_positions = fp;
  plan.text_only_path =
      policy.text_only != TextOnlyBatch::kRowsNumbered && !HasGrids(batch.media);
  // HF v4 fills a text-only batch's padding with 1 (quirk 5), v5.2's generate() with 0.
  plan.pad_value = !plan.text_only_path                                  ? policy.pad_value
                   : policy.text_only == TextOnlyBatch::kCumsumPadsInMax ? 1
                                                                         : 0;
  plan.decode = policy.decode;
  plan.rope_index_pad_value = plan.text_only_path &&
                                      policy.text_only == TextOnlyBatch::kGenerateCumsum
                                  ? policy.pad_value
                                  : plan.pad_value;
  ReserveRows(batch.batch_size, plan);

  const int64_t l = batch.seq_len;
  const BatchScanner scanner(config, policy, batch.media);
  MediaCursor cursor;
  std::vector<int64_t> gathered;
  std::vector<int64_t> gathered_types;
  std::vector<Span> spans;  // each row's, reusing one allocation
  spans.reserve(scanner.MaxRowSpans(l));
  for (int64_t row = 0; row < batch.batch_size; ++row) {
    const absl::Span<const int64_t> ids(batch.input_ids.data() + row * l, l);
    // The real tokens: a contiguous run of the row (read in place) or gathered from a mask
    // with holes.
    const auto [first, last, contiguous] = real_columns[row];
    std::vector<int64_t> columns;
    absl::Span<const int64_t> real_tokens = ids.subspan(first, last - first);
    absl::Span<const int64_t> real_types;
    if (!batch.mm_token_type_ids.empty()) {
      real_types = batch.mm_token_type_ids.subspan(row * l + first, last - first);
    }
    if (!contiguous) {
      const int64_t* mask = batch.attention_mask.data() + row * l;
      gathered.clear();
      gathered_types.clear();
      for (int64_t c = first; c < last; ++c) {
        if (mask[c] == 1) {
          columns.push_back(c);
          gathered.push_back(ids[c]);
          if (!batch.mm_token_type_ids.empty()) {
            gathered_types.push_back(batch.mm_token_type_ids[row * l + c]);
          }
        }
      }
      real_tokens = gathered;
      real_types = gathered_types;
    }
    const int64_t n = real_tokens.size();
    if (policy.blocks_from_media_runs && batch.mm_token_type_ids.empty()) {
      // The runs of image and video tokens are the blocks; start and end ids are text.
      gathered_types.resize(n);
      for (int64_t i = 0; i < n; ++i) {
        gathered_types[i] = real_tokens[i] == config.tokens.image   ? 1
                            : real_tokens[i] == config.tokens.video ? 2
                                                                    : 0;
      }
      real_types = gathered_types;
    }
    const size_t first_image = cursor.image;
    if (n == 0 && !plan.text_only_path) {
      return absl::InvalidArgumentError(
          absl::StrCat("row ", row, " has no tokens (its attention_mask is all 0)"));
    }
    spans.clear();
    MROPE_RETURN_IF_ERROR(typed ? scanner.ScanRowByTypes(real_tokens, real_types, cursor, row, spans)
                                : scanner.ScanRow(real_tokens, cursor, row, spans));
    if (plan.text_only_path) {
      // HF never scans a batch without grids; media tokens in it are still an error here.
      for (const Span& span : spans) {
        if (span.kind != SpanKind::kText && span.kind != SpanKind::kAudio) {
          return absl::InvalidArgumentError(absl::StrCat(
              "row ", row, " has a ", SpanKindName(span.kind),
              " block but image_grid_thw and video_grid_thw are empty"));
        }
      }
      spans = {Span::Text(n)};  // positions are cumsum(mask) - 1, audio included
    }
    SequencePositions& seq = AddRow(plan);
    MROPE_RETURN_IF_ERROR(planner.Plan(spans, seq));
    const int64_t pads = l - n;
    double row_max = seq.max_position();
    if (plan.text_only_path && policy.text_only == TextOnlyBatch::kCumsumPadsInMax && pads > 0) {
      row_max = n == 0 ? plan.pad_value : std::max(row_max, plan.pad_value);
    }
    const double delta_unpadded =
        AddPositions(fp, AddPositions(fp, row_max, 1), -static_cast<double>(n));
    const double delta_padded = AddPositions(fp, delta_unpadded, -static_cast<double>(pads));
    RowLayout& layout = plan.layouts.emplace_back();
    layout.first_column = first;
    layout.scattered_columns = std::move(columns);
    layout.delta = policy.delta_against_unpadded ? delta_unpadded : delta_padded;
    if (policy.clamp_delta) layout.delta = std::max(layout.delta, 0.0);
    if (policy.zero_deltas) layout.delta = 0;
    if (policy.decode == DecodeRule::kTargetGridTable) {
      MROPE_RETURN_IF_ERROR(TakeTargetGrids(batch.media, row, first_image, cursor, layout));
      layout.decode_offset = static_cast<int64_t>(NextPosition(seq));
    } else if (policy.per_request) {
      layout.decode_delta = delta_unpadded;
      layout.decode_offset = n;
    } else if (policy.decode == DecodeRule::kPerAxisFromLast) {
      // generate() stores get_rope_index's deltas, or zeros when it never called it.
      layout.decode_delta = plan.text_only_path ? 0 : layout.delta;
      layout.decode_offset = l;
    } else {
      layout.decode_delta = delta_padded;
      layout.decode_offset = l;
    }
    if (policy.decode == DecodeRule::kPerAxisFromLast) {
      MROPE_RETURN_IF_ERROR(SetLastColumn(plan, seq, l, layout));
    }
  }
  MROPE_RETURN_IF_ERROR(CheckMediaConsumed(batch.media, cursor));
  return plan;
}

absl::StatusOr<BatchPlan> PlanSequences(const ModelConfig& config,
                                        const std::vector<std::vector<Span>>& sequences,
                                        const PositionLimits& limits) {
  MROPE_ASSIGN_OR_RETURN(const SequencePlanner planner, SequencePlanner::Create(config, limits));
  return PlanSequences(planner, sequences);
}

absl::StatusOr<BatchPlan> PlanSequences(const SequencePlanner& planner,
                                        const std::vector<std::vector<Span>>& sequences) {
  const PositionLimits& limits = planner.limits();
  const int64_t b = sequences.size();
  if (b > limits.max_batch_rows) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sequences: ", b, " sequences exceed max_batch_rows = ", limits.max_batch_rows));
  }
  BatchPlan plan;
  plan.limits = limits;
  plan.batch_size = b;
  plan.float_positions = planner.policy().float_positions;
  plan.pad_value = 0;
  plan.rope_index_pad_value = 0;
  ReserveRows(b, plan);
  for (int64_t i = 0; i < b; ++i) {
    if (sequences[i].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("sequences[", i, "] has no spans"));
    }
    SequencePositions& seq = AddRow(plan);
    const absl::Status status = planner.Plan(sequences[i], seq);
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("sequences[", i, "]: ", status.message()));
    }
    plan.seq_len = std::max(plan.seq_len, seq.num_tokens());
  }
  if (plan.seq_len * b > limits.max_total_tokens) {
    return absl::InvalidArgumentError(absl::StrCat("sequences: padded batch of ", b, " x ",
                                                   plan.seq_len, " exceeds max_total_tokens = ",
                                                   limits.max_total_tokens));
  }
  for (const SequencePositions& seq : plan.rows) {
    const int64_t n = seq.num_tokens();
    RowLayout& layout = plan.layouts.emplace_back();
    layout.first_column = plan.seq_len - n;  // right-aligned, one contiguous run
    layout.delta = seq.delta();
    layout.decode_delta = seq.delta();
    layout.decode_offset = n;
  }
  return plan;
}

template <typename Out, typename Alloc>
absl::Status FillBatch(const BatchPlan& plan, std::vector<Out, Alloc>& out, Padding padding) {
  if (plan.sequential_grid != nullptr) return FillSequentialGrid(plan, out);
  const int64_t b = plan.batch_size;
  const int64_t l = plan.seq_len;
  const Out pad = static_cast<Out>(padding == Padding::kPrefill ? plan.pad_value
                                                                : plan.rope_index_pad_value);
  out.resize(3 * b * l);
  PositionBuffer<Out> scratch;
  for (int64_t row = 0; row < b; ++row) {
    const SequencePositions& seq = plan.rows[row];
    const RowLayout& layout = plan.layouts[row];
    const std::vector<int64_t>& columns = layout.scattered_columns;
    const int64_t n = seq.num_tokens();
    Out* planes[3] = {out.data() + row * l, out.data() + (b + row) * l,
                      out.data() + (2 * b + row) * l};
    if (columns.empty()) {  // contiguous: pads around one run
      const int64_t c = layout.first_column;
      for (Out* p : planes) {
        FillConstant(p, c, pad);
        FillConstant(p + c + n, l - c - n, pad);
      }
      MROPE_RETURN_IF_ERROR(seq.Fill<Out>(0, n, {planes[0] + c, planes[1] + c, planes[2] + c}));
      continue;
    }
    scratch.resize(3 * n);
    MROPE_RETURN_IF_ERROR(
        seq.Fill<Out>(0, n, {scratch.data(), scratch.data() + n, scratch.data() + 2 * n}));
    // Pads only in the gaps between real columns (ascending): every slot is written once.
    for (int axis = 0; axis < 3; ++axis) {
      Out* plane = planes[axis];
      int64_t gap_begin = 0;
      for (int64_t i = 0; i < n; ++i) {
        FillConstant(plane + gap_begin, columns[i] - gap_begin, pad);
        plane[columns[i]] = scratch[axis * n + i];
        gap_begin = columns[i] + 1;
      }
      FillConstant(plane + gap_begin, l - gap_begin, pad);
    }
  }
  return absl::OkStatus();
}

template <typename Out, typename Alloc>
absl::Status FillDecode(const BatchPlan& plan, int64_t steps, std::vector<Out, Alloc>& out) {
  // Hardening (tests/regression/positions_regression_test.cc): this used the default limits,
  // not the plan's, and did not bound B * steps, so one request could allocate 3 * 4096 * 2^24
  // positions.
  const PositionLimits& limits = plan.limits;
  if (steps < 0 || steps > limits.max_decode_steps) {
    return absl::InvalidArgumentError(absl::StrCat(
        "decode steps must be in [0, max_decode_steps = ", limits.max_decode_steps, "], got ",
        steps));
  }
  const int64_t b = plan.batch_size;
  if (steps > 0 && b > limits.max_total_tokens / steps) {
    return absl::InvalidArgumentError(absl::StrCat("decode positions of ", b, " rows x ", steps,
                                                   " steps exceed max_total_tokens = ",
                                                   limits.max_total_tokens));
  }
  if (std::is_integral<Out>::value && plan.float_positions) {
    return absl::InvalidArgumentError(
        "this model's positions are float32 (Qwen3-Omni); request float output");
  }
  if (plan.sequential_grid != nullptr) return FillSequentialGridDecode(plan, steps, out);
  out.resize(3 * b * steps);
  const bool per_axis = plan.decode == DecodeRule::kPerAxisFromLast;
  const bool table = plan.decode == DecodeRule::kTargetGridTable;
  for (int64_t row = 0; row < b; ++row) {
    const RowLayout& layout = plan.layouts[row];
    for (int64_t k = 0; k < steps; ++k) {
      const std::array<double, 3> step =
          table ? TargetTableStep(layout, k) : std::array<double, 3>{0, 0, 0};
      for (int axis = 0; axis < 3; ++axis) {
        const double v =
            table      ? step[axis]
            : per_axis ? AddPositions(plan.float_positions, layout.last_column[axis],
                                      static_cast<double>(1 + k))
                       : AddPositions(plan.float_positions,
                                      static_cast<double>(layout.decode_offset + k),
                                      layout.decode_delta);
        if (v > static_cast<double>(std::numeric_limits<Out>::max())) {
          return absl::OutOfRangeError(
              absl::StrCat("decode position ", v, " does not fit the requested output type"));
        }
        out[(axis * b + row) * steps + k] = static_cast<Out>(v);
      }
    }
  }
  return absl::OkStatus();
}

int64_t RowTokenCount(const BatchPlan& plan, int64_t row) {
  return plan.sequential_grid != nullptr ? plan.sequential_grid->row_tokens[row]
                                         : plan.rows[row].num_tokens();
}

template <typename Out>
absl::Status FillRowTokens(const BatchPlan& plan, int64_t row, int64_t begin, int64_t end,
                           Out* out, int64_t axis_stride) {
  if (plan.sequential_grid != nullptr) {
    return FillSequentialGridRow(plan, row, begin, end, out, axis_stride);
  }
  return plan.rows[row].Fill<Out>(begin, end, {out, out + axis_stride, out + 2 * axis_stride});
}

template <typename Out>
absl::StatusOr<PackedPositions<Out>> PackBatch(const BatchPlan& plan,
                                               const PositionLimits& limits) {
  return internal::PackRows<Out>(
      plan.batch_size, plan.num_axes, [&](int64_t row) { return RowTokenCount(plan, row); },
      [&](int64_t row, Out* out, int64_t axis_stride) {
        return FillRowTokens(plan, row, 0, RowTokenCount(plan, row), out, axis_stride);
      },
      limits);
}

template absl::Status FillRowTokens(const BatchPlan&, int64_t, int64_t, int64_t, int64_t*,
                                    int64_t);
template absl::Status FillRowTokens(const BatchPlan&, int64_t, int64_t, int64_t, int32_t*,
                                    int64_t);
template absl::Status FillRowTokens(const BatchPlan&, int64_t, int64_t, int64_t, float*, int64_t);
template absl::StatusOr<PackedPositions<int64_t>> PackBatch(const BatchPlan&,
                                                            const PositionLimits&);
template absl::StatusOr<PackedPositions<int32_t>> PackBatch(const BatchPlan&,
                                                            const PositionLimits&);
template absl::StatusOr<PackedPositions<float>> PackBatch(const BatchPlan&, const PositionLimits&);

// For std::vector (callers that keep their own) and PositionBuffer (the service's results).
template absl::Status FillBatch(const BatchPlan&, std::vector<int64_t>&, Padding);
template absl::Status FillBatch(const BatchPlan&, std::vector<int32_t>&, Padding);
template absl::Status FillBatch(const BatchPlan&, std::vector<float>&, Padding);
template absl::Status FillBatch(const BatchPlan&, PositionBuffer<int64_t>&, Padding);
template absl::Status FillBatch(const BatchPlan&, PositionBuffer<int32_t>&, Padding);
template absl::Status FillBatch(const BatchPlan&, PositionBuffer<float>&, Padding);
template absl::Status FillDecode(const BatchPlan&, int64_t, std::vector<int64_t>&);
template absl::Status FillDecode(const BatchPlan&, int64_t, std::vector<int32_t>&);
template absl::Status FillDecode(const BatchPlan&, int64_t, std::vector<float>&);
template absl::Status FillDecode(const BatchPlan&, int64_t, PositionBuffer<int64_t>&);
template absl::Status FillDecode(const BatchPlan&, int64_t, PositionBuffer<int32_t>&);
template absl::Status FillDecode(const BatchPlan&, int64_t, PositionBuffer<float>&);

}  // namespace mrope
