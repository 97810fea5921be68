#include "mrope/positions/sequential_grid.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mrope/common/status_macros.h"

namespace mrope {
namespace {

constexpr int64_t kImageType = 1;

// Image `index`'s grid tokens as rows x columns (the columns count the row separator).
absl::Status GridShape(const ModelConfig& config, const Grid& grid, size_t index,
                       const PositionLimits& limits, int64_t& rows, int64_t& columns) {
  const int64_t m = config.spatial_merge_size;
  if (grid.t != 1 || grid.h < m || grid.w < m || grid.h % m != 0 || grid.w % m != 0 ||
      grid.h > limits.max_grid_value || grid.w > limits.max_grid_value) {
    return absl::InvalidArgumentError(absl::StrCat(
        "image_grid_thw[", index, "] = (", grid.t, ", ", grid.h, ", ", grid.w, "): ",
        config.rules->name, " images have t = 1 and h, w positive multiples of ",
        "spatial_merge_size = ", m, " up to max_grid_value = ", limits.max_grid_value));
  }
  rows = grid.h / m;
  columns = grid.w / m + 1;
  return absl::OkStatus();
}

// One row's real tokens (ids and types in row order), positioned into planes[a] + column of
// each real token; returns the row's largest position.
absl::StatusOr<int64_t> PlaceRow(const ModelConfig& config, const PositionLimits& limits,
                                 const std::vector<int64_t>& ids,
                                 const std::vector<int64_t>& types,
                                 const std::vector<int64_t>& columns, int64_t row,
                                 const MediaInputs& media, std::vector<GridImage>& images,
                                 std::vector<int64_t*>& planes) {
  const int32_t axes = static_cast<int32_t>(planes.size());
  const int64_t n = static_cast<int64_t>(ids.size());
  int64_t max_position = n - 1;
  for (int64_t i = 0; i < n; ++i) {
    for (int32_t a = 0; a < axes; ++a) planes[a][columns[i]] = i;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (types[i] != 0 && types[i] != kImageType) {
      return absl::InvalidArgumentError(absl::StrCat(
          "mm_token_type_ids[", row, "][", columns[i], "] = ", types[i], ": ",
          config.rules->name, " has images only (0 text, 1 image)"));
    }
    if ((types[i] == kImageType) != (ids[i] == config.tokens.image)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input_ids[", row, "][", columns[i], "] = ", ids[i], " is typed ", types[i],
          " in mm_token_type_ids: image tokens (image_token_id = ", config.tokens.image,
          ") and only they are typed 1"));
    }
  }
  for (int64_t i = 0; i < n;) {
    if (types[i] != kImageType) {
      ++i;
      continue;
    }
    int64_t end = i;
    while (end < n && types[end] == kImageType) ++end;
    const size_t next_image = images.size();
    if (next_image >= media.image_grid_thw.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "row ", row, ", column ", columns[i], ": an image run with no image_grid_thw entry left (",
          media.image_grid_thw.size(), " given)"));
    }
    int64_t grid_rows = 0, grid_columns = 0;
    MROPE_RETURN_IF_ERROR(GridShape(config, media.image_grid_thw[next_image], next_image, limits,
                                    grid_rows, grid_columns));
    const int64_t grid_tokens = grid_rows * grid_columns;
    const int64_t length = end - i;
    if (length != grid_tokens && length != grid_tokens + 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "row ", row, ", column ", columns[i], ": the image run has ", length,
          " tokens, image_grid_thw[", next_image, "] gives ", grid_tokens, " (or ",
          grid_tokens + 2, " with its begin and end tokens)"));
    }
    const int64_t ordinal = static_cast<int64_t>(next_image);
    const int64_t first = length == grid_tokens ? i : i + 1;
    for (int64_t r = 0, k = first; r < grid_rows; ++r) {
      for (int64_t c = 0; c < grid_columns; ++c, ++k) {
        planes[axes - 3][columns[k]] = c;
        planes[axes - 2][columns[k]] = r;
        planes[axes - 1][columns[k]] = ordinal;
      }
    }
    max_position = std::max({max_position, grid_columns - 1, grid_rows - 1, ordinal});
    images.push_back({row, i, end, grid_rows, grid_columns});
    i = end;
  }
  return max_position;
}

}  // namespace

absl::StatusOr<BatchPlan> PlanSequentialGridBatch(const SequencePlanner& planner,
                                                  const PromptBatch& batch) {
  const ModelConfig& config = planner.config();
  const MediaInputs& media = batch.media;
  if (!media.video_grid_thw.empty() || !media.second_per_grid_ts.empty() ||
      !media.video_second_per_grid.empty() || !media.audio_feature_lengths.empty() ||
      !media.images_per_sample.empty() || media.use_audio_in_video) {
    return absl::InvalidArgumentError(absl::StrCat(
        config.rules->name, " takes images only: no video, audio or images_per_sample inputs"));
  }
  if (!media.image_grid_thw.empty() && batch.mm_token_type_ids.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mm_token_type_ids is required: ", config.rules->name, " finds images from it"));
  }
  const int64_t b = batch.batch_size;
  const int64_t l = batch.seq_len;
  const int32_t axes = config.num_axes;
  auto grid = std::make_shared<SequentialGridPositions>();
  grid->num_axes = axes;
  grid->positions.assign(axes * b * l, 0);

  BatchPlan plan;
  plan.limits = planner.limits();
  plan.batch_size = b;
  plan.seq_len = l;
  plan.num_axes = axes;
  plan.pad_value = plan.rope_index_pad_value = 0;
  plan.decode = DecodeRule::kPerAxisFromLast;
  plan.layouts.resize(b);
  std::vector<int64_t> ids, types, columns;
  std::vector<int64_t*> planes(axes);
  for (int64_t row = 0; row < b; ++row) {
    ids.clear();
    types.clear();
    columns.clear();
    for (int64_t c = 0; c < l; ++c) {
      const int64_t at = row * l + c;
      if (!batch.attention_mask.empty()) {
        const int64_t mask = batch.attention_mask[at];
        if (mask != 0 && mask != 1) {
          return absl::InvalidArgumentError(absl::StrCat("attention_mask[", row, "][", c,
                                                         "] must be 0 or 1, got ", mask));
        }
        if (mask == 0) continue;
      }
      ids.push_back(batch.input_ids[at]);
      types.push_back(batch.mm_token_type_ids.empty() ? 0 : batch.mm_token_type_ids[at]);
      columns.push_back(c);
    }
    if (ids.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "row ", row, " has no real tokens (attention_mask is all 0): ", config.rules->name,
          "'s delta is undefined for it"));
    }
    for (int32_t a = 0; a < axes; ++a) planes[a] = grid->positions.data() + (a * b + row) * l;
    MROPE_ASSIGN_OR_RETURN(const int64_t max_position,
                           PlaceRow(config, plan.limits, ids, types, columns, row, media,
                                    grid->images, planes));
    RowLayout& layout = plan.layouts[row];
    layout.first_column = columns.front();
    const int64_t n = static_cast<int64_t>(columns.size());
    if (columns.back() - columns.front() + 1 != n) layout.scattered_columns = columns;
    grid->row_tokens.push_back(n);
    layout.delta = layout.decode_delta =
        static_cast<double>(max_position + 1 - static_cast<int64_t>(ids.size()));
    layout.decode_offset = l;
  }
  if (grid->images.size() != media.image_grid_thw.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "image_grid_thw has ", media.image_grid_thw.size(), " entries and the batch ",
        grid->images.size(), " image runs"));
  }
  plan.sequential_grid = std::move(grid);
  return plan;
}

namespace {

template <typename Out>
absl::Status CheckFits(int64_t value) {
  if (std::is_same<Out, int32_t>::value && value > std::numeric_limits<int32_t>::max()) {
    return absl::OutOfRangeError(
        absl::StrCat("position ", value, " does not fit the requested int32 output"));
  }
  return absl::OkStatus();
}

}  // namespace

template <typename Out, typename Alloc>
absl::Status FillSequentialGrid(const BatchPlan& plan, std::vector<Out, Alloc>& out) {
  const PositionBuffer<int64_t>& positions = plan.sequential_grid->positions;
  out.resize(positions.size());
  for (size_t i = 0; i < positions.size(); ++i) {
    MROPE_RETURN_IF_ERROR(CheckFits<Out>(positions[i]));
    out[i] = static_cast<Out>(positions[i]);
  }
  return absl::OkStatus();
}

template <typename Out, typename Alloc>
absl::Status FillSequentialGridDecode(const BatchPlan& plan, int64_t steps,
                                      std::vector<Out, Alloc>& out) {
  const SequentialGridPositions& grid = *plan.sequential_grid;
  const int64_t b = plan.batch_size;
  const int64_t l = plan.seq_len;
  out.resize(grid.num_axes * b * steps);
  for (int32_t a = 0; a < grid.num_axes; ++a) {
    for (int64_t row = 0; row < b; ++row) {
      const int64_t last = grid.positions[(a * b + row) * l + l - 1];
      for (int64_t k = 0; k < steps; ++k) {
        MROPE_RETURN_IF_ERROR(CheckFits<Out>(last + 1 + k));
        out[(a * b + row) * steps + k] = static_cast<Out>(last + 1 + k);
      }
    }
  }
  return absl::OkStatus();
}

template <typename Out>
absl::Status FillSequentialGridRow(const BatchPlan& plan, int64_t row, int64_t begin,
                                   int64_t end, Out* out, int64_t axis_stride) {
  const SequentialGridPositions& grid = *plan.sequential_grid;
  const RowLayout& layout = plan.layouts[row];
  const int64_t n = grid.row_tokens[row];
  if (begin < 0 || end < begin) {
    return absl::InvalidArgumentError(
        absl::StrCat("window [", begin, ", ", end, ") must satisfy 0 <= begin <= end"));
  }
  if (end - n > plan.limits.max_decode_steps) {
    return absl::InvalidArgumentError(
        absl::StrCat("window end ", end, " is more than max_decode_steps = ",
                     plan.limits.max_decode_steps, " past the prompt's ", n, " tokens"));
  }
  const auto column = [&](int64_t i) {
    return layout.scattered_columns.empty() ? layout.first_column + i
                                            : layout.scattered_columns[i];
  };
  for (int32_t a = 0; a < grid.num_axes; ++a) {
    const int64_t* plane = grid.positions.data() + (a * plan.batch_size + row) * plan.seq_len;
    Out* target = out + a * axis_stride;
    const int64_t prompt_end = std::min(end, n);
    for (int64_t i = begin; i < prompt_end; ++i) {
      MROPE_RETURN_IF_ERROR(CheckFits<Out>(plane[column(i)]));
      target[i - begin] = static_cast<Out>(plane[column(i)]);
    }
    const int64_t last = plane[column(n - 1)];
    for (int64_t i = std::max(begin, n); i < end; ++i) {
      MROPE_RETURN_IF_ERROR(CheckFits<Out>(last + 1 + i - n));
      target[i - begin] = static_cast<Out>(last + 1 + i - n);
    }
  }
  return absl::OkStatus();
}

template absl::Status FillSequentialGrid(const BatchPlan&, std::vector<int64_t>&);
template absl::Status FillSequentialGrid(const BatchPlan&, std::vector<int32_t>&);
template absl::Status FillSequentialGrid(const BatchPlan&, std::vector<float>&);
template absl::Status FillSequentialGrid(const BatchPlan&, PositionBuffer<int64_t>&);
template absl::Status FillSequentialGrid(const BatchPlan&, PositionBuffer<int32_t>&);
template absl::Status FillSequentialGrid(const BatchPlan&, PositionBuffer<float>&);
template absl::Status FillSequentialGridDecode(const BatchPlan&, int64_t, std::vector<int64_t>&);
template absl::Status FillSequentialGridDecode(const BatchPlan&, int64_t, std::vector<int32_t>&);
template absl::Status FillSequentialGridDecode(const BatchPlan&, int64_t, std::vector<float>&);
template absl::Status FillSequentialGridDecode(const BatchPlan&, int64_t,
                                               PositionBuffer<int64_t>&);
template absl::Status FillSequentialGridDecode(const BatchPlan&, int64_t,
                                               PositionBuffer<int32_t>&);
template absl::Status FillSequentialGridDecode(const BatchPlan&, int64_t, PositionBuffer<float>&);

template absl::Status FillSequentialGridRow(const BatchPlan&, int64_t, int64_t, int64_t, int64_t*,
                                            int64_t);
template absl::Status FillSequentialGridRow(const BatchPlan&, int64_t, int64_t, int64_t, int32_t*,
                                            int64_t);
template absl::Status FillSequentialGridRow(const BatchPlan&, int64_t, int64_t, int64_t, float*,
                                            int64_t);

}  // namespace mrope
