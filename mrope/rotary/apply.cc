#include "mrope/rotary/apply.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "mrope/rotary/heads_overlap.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/axis_map.h"
#include "mrope/rotary/cos_sin_table.h"
#include "mrope/rotary/dtype_storage.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rotary_spec.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// Adds count * stride to *extent; false on int64 overflow (count, stride, *extent >= 0).
bool AddExtent(int64_t count, int64_t stride, int64_t* extent) {
  if (stride != 0 && count > (kInt64Max - *extent) / stride) return false;
  *extent += count * stride;
  return true;
}

absl::Status ValidateHeads(const HeadsView& v, absl::string_view name, const RotarySpec& spec,
                           int64_t num_tokens) {
  if (v.dtype != DType::kFloat32 && v.dtype != DType::kBFloat16 && v.dtype != DType::kFloat16) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ".dtype must be fp32, bf16 or fp16, got ", static_cast<int>(v.dtype)));
  }
  if (v.head_dim != spec.head_dim) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ".head_dim must equal spec.head_dim = ", spec.head_dim, ", got ", v.head_dim));
  }
  if (v.num_tokens != num_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(name, ".num_tokens must equal the ", num_tokens,
                                                   " tokens of the positions, got ", v.num_tokens));
  }
  if (v.num_heads < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ".num_heads must be >= 0, got ", v.num_heads));
  }
  if (v.token_stride < 0 || v.head_stride < 0) {
    return absl::InvalidArgumentError(absl::StrCat(name, " strides must be >= 0, got token_stride ",
                                                   v.token_stride, ", head_stride ",
                                                   v.head_stride));
  }
  if (num_tokens == 0 || v.num_heads == 0) return absl::OkStatus();
  if (v.data == nullptr) return absl::InvalidArgumentError(absl::StrCat(name, ".data is null"));
  int64_t extent = v.head_dim;
  const int64_t element_bytes = ElementSize(v.dtype);
  if (!AddExtent(num_tokens - 1, v.token_stride, &extent) ||
      !AddExtent(v.num_heads - 1, v.head_stride, &extent) || extent > kInt64Max / element_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": addressed extent in bytes overflows int64"));
  }
  return absl::OkStatus();
}

int64_t PositionAt(const PositionsView& positions, int axis, int64_t token) {
  const int64_t offset = axis * positions.axis_stride + token;
  return positions.is_int64 ? static_cast<const int64_t*>(positions.data)[offset]
                            : static_cast<const int32_t*>(positions.data)[offset];
}

// Positions [num_axes][T] with every value in [0, limit).
absl::Status ValidatePositions(const PositionsView& positions, int64_t limit, int num_axes) {
  if (positions.num_tokens < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("positions.num_tokens must be >= 0, got ", positions.num_tokens));
  }
  if (positions.axis_stride < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("positions.axis_stride must be >= 0, got ", positions.axis_stride));
  }
  if (positions.num_tokens == 0) return absl::OkStatus();
  if (positions.data == nullptr) return absl::InvalidArgumentError("positions.data is null");
  int64_t extent = positions.num_tokens;
  const int64_t element_bytes = positions.is_int64 ? 8 : 4;
  if (!AddExtent(num_axes - 1, positions.axis_stride, &extent) ||
      extent > kInt64Max / element_bytes) {
    return absl::InvalidArgumentError("positions: addressed extent in bytes overflows int64");
  }
  for (int axis = 0; axis < num_axes; ++axis) {
    for (int64_t t = 0; t < positions.num_tokens; ++t) {
      const int64_t p = PositionAt(positions, axis, t);
      if (p < 0 || p >= limit) {
        return absl::InvalidArgumentError(
            absl::StrCat("positions[", axis, "][", t, "] = ", p, " is outside [0, ", limit, ")"));
      }
    }
  }
  return absl::OkStatus();
}

float LoadElement(const HeadsView& v, int64_t offset) {
  return LoadAs(v.dtype, static_cast<const uint8_t*>(v.data) + offset * ElementSize(v.dtype));
}

void StoreElement(const HeadsView& v, int64_t offset, float value) {
  StoreAs(v.dtype, value, static_cast<uint8_t*>(v.data) + offset * ElementSize(v.dtype));
}

// Rotates every head of token `t` of `v`: pair j's first element with `row[j]`, its second with
// `second[j]` (the same row but for XD-RoPE's split halves).
void RotateToken(const RotarySpec& spec, const HeadsView& v, int64_t t, const CosSin* row,
                 const CosSin* second) {
  const int num_pairs = spec.rotary_dim / 2;
  for (int32_t h = 0; h < v.num_heads; ++h) {
    const int64_t base = t * v.token_stride + h * v.head_stride;
    for (int j = 0; j < num_pairs; ++j) {
      const int64_t i1 = base + PairFirstIndex(spec.layout, j);
      const int64_t i2 = base + PairSecondIndex(spec.layout, j, spec.rotary_dim);
      const float x1 = LoadElement(v, i1);
      const float x2 = LoadElement(v, i2);
      StoreElement(v, i1, RotatedFirst(x1, x2, row[j]));
      StoreElement(v, i2, RotatedSecond(x1, x2, second[j]));
    }
  }
}

// Validates the spec and both views for `num_tokens` tokens, then rotates each token with the
// rows `fill_row(t, row, second)` writes (rotary_dim / 2 entries each; `second` only for split
// halves).
template <typename FillRow>
absl::Status RotateAll(const RotarySpec& spec, int64_t num_tokens, const HeadsView& q,
                       const HeadsView& k, RotationDirection direction, FillRow fill_row) {
  MROPE_RETURN_IF_ERROR(ValidateRotarySpec(spec));
  if (!IsRotationDirection(direction)) {
    return absl::InvalidArgumentError(
        absl::StrCat("direction must be kForward or kInverse, got ", static_cast<int>(direction)));
  }
  MROPE_RETURN_IF_ERROR(ValidateHeads(q, "q", spec, num_tokens));
  MROPE_RETURN_IF_ERROR(ValidateHeads(k, "k", spec, num_tokens));
  MROPE_RETURN_IF_ERROR(ValidateDisjointHeads(q, k));
  CosSin row[kMaxRotaryPairs];
  CosSin second_row[kMaxRotaryPairs];
  const bool split = spec.axis_map.split_halves;
  const CosSin* second = split ? second_row : row;
  for (int64_t t = 0; t < num_tokens; ++t) {
    fill_row(t, row, second_row);
    for (int j = 0; j < spec.axis_map.num_pairs; ++j) {
      row[j] = ForDirection(row[j], direction);
      if (split) second_row[j] = ForDirection(second_row[j], direction);
    }
    RotateToken(spec, q, t, row, second);
    RotateToken(spec, k, t, row, second);
  }
  return absl::OkStatus();
}

// The cos/sin of every pair of token `t`, evaluated on the fly; with split halves also those
// of the second elements into `second`.
void FillRowOnTheFly(const RotarySpec& spec, const PositionsView& positions, int64_t t,
                     CosSin* row, CosSin* second) {
  const AxisMap& map = spec.axis_map;
  float position[kMaxAxes];
  for (int axis = 0; axis < AxisCount(map); ++axis) {
    position[axis] = static_cast<float>(PositionAt(positions, axis, t));
  }
  for (int j = 0; j < map.num_pairs; ++j) {
    row[j] = PairCosSin(spec.inv_freq[j], position[map.axis[j]], spec.attention_scaling,
                        spec.sincos_math);
    if (map.split_halves) {
      second[j] = PairCosSin(spec.inv_freq[j], position[map.second_axis[j]],
                             spec.attention_scaling, spec.sincos_math);
    }
  }
}

absl::Status RefuseSplitHalves(const RotarySpec& spec, absl::string_view what) {
  if (!spec.axis_map.split_halves) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": XD-RoPE (mrope_layout xd) gives a pair's two elements different cos/sin; "
      "ComputeElementCosSin gives them per element"));
}

}  // namespace

absl::Status ValidateRotarySpec(const RotarySpec& spec) {
  if (spec.head_dim < 1 || spec.head_dim > kMaxHeadDim) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.head_dim must be in [1, ", kMaxHeadDim, "], got ", spec.head_dim));
  }
  if (spec.rotary_dim < 2 || spec.rotary_dim > spec.head_dim || spec.rotary_dim % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.rotary_dim must be even and in [2, head_dim = ", spec.head_dim,
                     "], got ", spec.rotary_dim));
  }
  if (spec.layout != RotaryLayout::kNeox && spec.layout != RotaryLayout::kGptj) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.layout must be kNeox or kGptj, got ", static_cast<int>(spec.layout)));
  }
  if (!IsSinCosMath(spec.sincos_math)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.sincos_math must be kDouble or kFloat32, got ", static_cast<int>(spec.sincos_math)));
  }
  const int num_pairs = spec.rotary_dim / 2;
  MROPE_RETURN_IF_ERROR(ValidateAxisMap(spec.axis_map, num_pairs));
  if (static_cast<int64_t>(spec.inv_freq.size()) != num_pairs) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.inv_freq must have rotary_dim / 2 = ", num_pairs, " entries, got ",
                     spec.inv_freq.size()));
  }
  for (int j = 0; j < num_pairs; ++j) {
    if (!std::isfinite(spec.inv_freq[j])) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec.inv_freq[", j, "] must be finite, got ", spec.inv_freq[j]));
    }
  }
  if (!std::isfinite(spec.attention_scaling)) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.attention_scaling must be finite, got ", spec.attention_scaling));
  }
  return absl::OkStatus();
}

absl::Status ApplyMropeReference(const RotarySpec& spec, const PositionsView& positions,
                                 const HeadsView& q, const HeadsView& k,
                                 RotationDirection direction) {
  MROPE_RETURN_IF_ERROR(ValidateAxisMap(spec.axis_map, spec.axis_map.num_pairs));
  MROPE_RETURN_IF_ERROR(ValidatePositions(positions, kMaxPosition, AxisCount(spec.axis_map)));
  return RotateAll(spec, positions.num_tokens, q, k, direction,
                   [&](int64_t t, CosSin* row, CosSin* second) {
                     FillRowOnTheFly(spec, positions, t, row, second);
                   });
}

absl::Status ApplyMropeWithTable(const RotarySpec& spec, const CosSinTable& table,
                                 const PositionsView& positions, const HeadsView& q,
                                 const HeadsView& k, RotationDirection direction) {
  if (table.inv_freq() != spec.inv_freq || table.attention_scaling() != spec.attention_scaling) {
    return absl::InvalidArgumentError(
        "cos/sin table was not built from spec.inv_freq and spec.attention_scaling");
  }
  MROPE_RETURN_IF_ERROR(ValidateAxisMap(spec.axis_map, spec.axis_map.num_pairs));
  MROPE_RETURN_IF_ERROR(
      ValidatePositions(positions, table.max_position(), AxisCount(spec.axis_map)));
  const AxisMap& map = spec.axis_map;
  return RotateAll(spec, positions.num_tokens, q, k, direction,
                   [&](int64_t t, CosSin* row, CosSin* second) {
    for (int j = 0; j < map.num_pairs; ++j) {
      row[j] = table.Get(PositionAt(positions, map.axis[j], t), j);
      if (map.split_halves) second[j] = table.Get(PositionAt(positions, map.second_axis[j], t), j);
    }
  });
}

absl::Status ApplyRotaryCosSin(const RotarySpec& spec, absl::Span<const CosSin> cos_sin,
                               const HeadsView& q, const HeadsView& k) {
  MROPE_RETURN_IF_ERROR(ValidateRotarySpec(spec));
  MROPE_RETURN_IF_ERROR(RefuseSplitHalves(spec, "ApplyRotaryCosSin"));
  const int64_t num_pairs = spec.rotary_dim / 2;
  if (q.num_tokens < 0 || static_cast<int64_t>(cos_sin.size()) / num_pairs != q.num_tokens ||
      static_cast<int64_t>(cos_sin.size()) % num_pairs != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cos_sin must have q.num_tokens * rotary_dim / 2 = ", q.num_tokens, " * ",
                     num_pairs, " entries, got ", cos_sin.size()));
  }
  return RotateAll(spec, q.num_tokens, q, k, RotationDirection::kForward,
                   [&](int64_t t, CosSin* row, CosSin* /*second*/) {
    for (int64_t j = 0; j < num_pairs; ++j) row[j] = cos_sin[t * num_pairs + j];
  });
}

absl::Status CheckCosSinEntries(int64_t num_tokens, int num_pairs) {
  if (num_pairs > 0 && num_tokens > kMaxCosSinTableEntries / num_pairs) {
    return absl::InvalidArgumentError(
        absl::StrCat("cos/sin of ", num_tokens, " tokens * ", num_pairs,
                     " pairs exceeds the limit of ", kMaxCosSinTableEntries, " entries"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<CosSin>> ComputeCosSin(const RotarySpec& spec,
                                                  const PositionsView& positions) {
  MROPE_RETURN_IF_ERROR(ValidateRotarySpec(spec));
  MROPE_RETURN_IF_ERROR(RefuseSplitHalves(spec, "ComputeCosSin"));
  MROPE_RETURN_IF_ERROR(ValidatePositions(positions, kMaxPosition, AxisCount(spec.axis_map)));
  const int num_pairs = spec.axis_map.num_pairs;
  MROPE_RETURN_IF_ERROR(CheckCosSinEntries(positions.num_tokens, num_pairs));
  std::vector<CosSin> result(positions.num_tokens * num_pairs);
  for (int64_t t = 0; t < positions.num_tokens; ++t) {
    FillRowOnTheFly(spec, positions, t, &result[t * num_pairs], nullptr);
  }
  return result;
}

absl::StatusOr<std::vector<CosSin>> ComputeElementCosSin(const RotarySpec& spec,
                                                         const PositionsView& positions) {
  MROPE_RETURN_IF_ERROR(ValidateRotarySpec(spec));
  MROPE_RETURN_IF_ERROR(ValidatePositions(positions, kMaxPosition, AxisCount(spec.axis_map)));
  const int num_pairs = spec.axis_map.num_pairs;
  MROPE_RETURN_IF_ERROR(CheckCosSinEntries(positions.num_tokens, spec.rotary_dim));
  std::vector<CosSin> result(positions.num_tokens * spec.rotary_dim);
  CosSin row[kMaxRotaryPairs];
  CosSin second_row[kMaxRotaryPairs];
  const CosSin* second = spec.axis_map.split_halves ? second_row : row;
  for (int64_t t = 0; t < positions.num_tokens; ++t) {
    FillRowOnTheFly(spec, positions, t, row, second_row);
    CosSin* out = &result[t * spec.rotary_dim];
    for (int j = 0; j < num_pairs; ++j) {
      out[PairFirstIndex(spec.layout, j)] = row[j];
      out[PairSecondIndex(spec.layout, j, spec.rotary_dim)] = second[j];
    }
  }
  return result;
}

}  // namespace mrope
