#ifndef MROPE_ROTARY_HF_COS_SIN_H_
#define MROPE_ROTARY_HF_COS_SIN_H_

// cos/sin laid out as a reference rotary module returns them (HF `forward(x, position_ids)`),
// for `mrope rotary --golden` and Python's Plan.cos_sin(layout="hf"). Which layout a model's
// module uses is its family's (mrope/model/model_family.cc).

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "mrope/rotary/rotary_spec.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {

enum class CosSinLayout : uint8_t {
  // [3][B][T][rotary_dim]: every pair at each axis's position, cat(freqs, freqs); the apply
  // function picks the axes (transformers v4.57.6: Qwen2-VL, Qwen2.5-VL, GLM-4.1V).
  kPerAxis = 0,
  // [B][T][rotary_dim]: column d is pair d mod (rotary_dim / 2) on its own axis (Qwen3-VL, the
  // transformers 5.x GLM and Qwen3.5 modules).
  kCat = 1,
  // [B][T][rotary_dim]: column d is pair d / 2 on its own axis (ERNIE-4.5-VL).
  kRepeatInterleave = 2,
};

// "per_axis", "cat", "repeat_interleave" (the golden cases' config.cos_layout; kPerAxis has no
// name there).
absl::string_view CosSinLayoutName(CosSinLayout layout);
absl::StatusOr<CosSinLayout> CosSinLayoutFromName(absl::string_view name);

// The pair whose cos/sin column `column` (< rotary_dim) of `layout` holds.
inline int CosSinColumnPair(CosSinLayout layout, int column, int rotary_dim) {
  return layout == CosSinLayout::kRepeatInterleave ? column / 2 : column % (rotary_dim / 2);
}

struct HfCosSin {
  std::vector<float> cos;
  std::vector<float> sin;
  std::vector<int64_t> shape;  // {3, B, T, rotary_dim} or {B, T, rotary_dim}
};

// cos/sin of batch rows `rows` (positions [3][T] each, the same T) in `layout`, with the values
// of ComputeCosSin (mrope/rotary/apply.h). Errors as ComputeCosSin's; InvalidArgument when the
// rows' token counts differ.
absl::StatusOr<HfCosSin> ComputeHfCosSin(const RotarySpec& spec, CosSinLayout layout,
                                         absl::Span<const PositionsView> rows);

}  // namespace mrope

#endif  // MROPE_ROTARY_HF_COS_SIN_H_
