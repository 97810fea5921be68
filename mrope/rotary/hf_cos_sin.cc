#include "mrope/rotary/hf_cos_sin.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/apply.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rotary_spec.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace {

// `spec` with every pair on `axis`.
RotarySpec OnOneAxis(const RotarySpec& spec, int axis) {
  RotarySpec on_axis = spec;
  for (int j = 0; j < on_axis.axis_map.num_pairs; ++j) {
    on_axis.axis_map.axis[j] = static_cast<uint8_t>(axis);
  }
  return on_axis;
}

// Appends the [T][rotary_dim] columns of `positions` in `layout`.
absl::Status AppendColumns(const RotarySpec& spec, CosSinLayout layout,
                           const PositionsView& positions, HfCosSin& out) {
  if (spec.axis_map.split_halves) {
    // XD-RoPE: the module's columns are the elements, each with its own axis.
    MROPE_ASSIGN_OR_RETURN(const std::vector<CosSin> elements,
                           ComputeElementCosSin(spec, positions));
    for (const CosSin& cs : elements) {
      out.cos.push_back(cs.cos);
      out.sin.push_back(cs.sin);
    }
    return absl::OkStatus();
  }
  MROPE_ASSIGN_OR_RETURN(const std::vector<CosSin> pairs, ComputeCosSin(spec, positions));
  const int half = spec.rotary_dim / 2;
  for (int64_t t = 0; t < positions.num_tokens; ++t) {
    for (int d = 0; d < spec.rotary_dim; ++d) {
      const CosSin cs = pairs[t * half + CosSinColumnPair(layout, d, spec.rotary_dim)];
      out.cos.push_back(cs.cos);
      out.sin.push_back(cs.sin);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view CosSinLayoutName(CosSinLayout layout) {
  switch (layout) {
    case CosSinLayout::kPerAxis:
      return "per_axis";
    case CosSinLayout::kCat:
      return "cat";
    case CosSinLayout::kRepeatInterleave:
      return "repeat_interleave";
  }
  return "unknown";
}

absl::StatusOr<CosSinLayout> CosSinLayoutFromName(absl::string_view name) {
  for (CosSinLayout layout :
       {CosSinLayout::kPerAxis, CosSinLayout::kCat, CosSinLayout::kRepeatInterleave}) {
    if (CosSinLayoutName(layout) == name) return layout;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown cos/sin layout '", name, "'; known: per_axis, cat, repeat_interleave"));
}

absl::StatusOr<HfCosSin> ComputeHfCosSin(const RotarySpec& spec, CosSinLayout layout,
                                         absl::Span<const PositionsView> rows) {
  const int64_t batch = static_cast<int64_t>(rows.size());
  const int64_t tokens = rows.empty() ? 0 : rows[0].num_tokens;
  for (int64_t b = 0; b < batch; ++b) {
    if (rows[b].num_tokens != tokens) {
      return absl::InvalidArgumentError(absl::StrCat("cos/sin: batch row ", b, " has ",
                                                     rows[b].num_tokens, " tokens, row 0 has ",
                                                     tokens));
    }
  }
  HfCosSin out;
  out.shape = {batch, tokens, spec.rotary_dim};
  if (layout == CosSinLayout::kPerAxis) {
    if (spec.axis_map.split_halves) {
      return absl::InvalidArgumentError("cos/sin: XD-RoPE has no per-axis layout");
    }
    out.shape.insert(out.shape.begin(), kNumAxes);
    for (int axis = 0; axis < kNumAxes; ++axis) {
      const RotarySpec on_axis = OnOneAxis(spec, axis);
      for (const PositionsView& row : rows) {
        MROPE_RETURN_IF_ERROR(AppendColumns(on_axis, layout, row, out));
      }
    }
    return out;
  }
  for (const PositionsView& row : rows) {
    MROPE_RETURN_IF_ERROR(AppendColumns(spec, layout, row, out));
  }
  return out;
}

}  // namespace mrope
