#ifndef MROPE_ROTARY_APPLY_H_
#define MROPE_ROTARY_APPLY_H_

// CPU reference M-RoPE: rotates q and k in place, using mrope/rotary/rope_math.h for every
// number (the CUDA kernel uses the same header). Compiled with -ffp-contract=off.
//
// Pair j of a head (NeoX: x[j], x[j + rotary_dim/2]; GPT-J: x[2j], x[2j+1]) becomes
// RotatePair(x1, x2, cos/sin of pair j), where pair j's angle is inv_freq[j] times the position
// of token t on axis axis_map.axis[j]. Dimensions >= rotary_dim are left untouched. bf16/fp16
// elements are widened exactly, rotated in fp32 and rounded back to nearest even.
//
// Every function validates everything before writing anything: the spec (ValidateRotarySpec),
// the views (dtype, head_dim == spec.head_dim, matching token counts, non-negative strides,
// non-null data, no int64 overflow of the addressed extent) and every position (in
// [0, kMaxPosition), or [0, table.max_position()) for the table variant). Errors are
// InvalidArgument naming the field. q and k must not share an element (ValidateDisjointHeads,
// the check the CUDA kernel's validation uses).

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mrope/rotary/cos_sin_table.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rotary_spec.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {

// head_dim in [1, kMaxHeadDim], rotary_dim even in [2, head_dim], a known layout, an axis map
// and inv_freq of rotary_dim / 2 entries, finite inv_freq and attention_scaling.
absl::Status ValidateRotarySpec(const RotarySpec& spec);

// Rotates q [T][Hq][D] and k [T][Hk][D] in place with cos/sin evaluated on the fly from
// `positions` [3][T]. Storage fp32, bf16 or fp16; math in fp32. Validates the spec, views and
// positions (shapes, strides, dtypes, sections) and returns InvalidArgument naming the field.
// RotationDirection::kInverse rotates by -angle: given the gradients of the rotated q and k,
// it gives the gradients of their inputs (the backward pass), in place.
absl::Status ApplyMropeReference(const RotarySpec& spec, const PositionsView& positions,
                                 const HeadsView& q, const HeadsView& k,
                                 RotationDirection direction = RotationDirection::kForward);

// The same, reading cos/sin from `table`, which must have been built from spec.inv_freq and
// spec.attention_scaling. Gives bit-identical results to ApplyMropeReference.
absl::Status ApplyMropeWithTable(const RotarySpec& spec, const CosSinTable& table,
                                 const PositionsView& positions, const HeadsView& q,
                                 const HeadsView& k,
                                 RotationDirection direction = RotationDirection::kForward);

// The same with caller-provided cos/sin: cos_sin[t * (rotary_dim / 2) + j] is used for pair j
// of token t (axis map and attention scaling already applied; spec.inv_freq is not used).
absl::Status ApplyRotaryCosSin(const RotarySpec& spec, absl::Span<const CosSin> cos_sin,
                               const HeadsView& q, const HeadsView& k);

// cos/sin per element of the rotated dims, [T][rotary_dim]: element PairFirstIndex(layout, j)
// of pair j takes the cos/sin of axis_map.axis[j], PairSecondIndex(...) that of
// axis_map.second_axis[j] with split halves (XD-RoPE), else of axis[j] too.
absl::StatusOr<std::vector<CosSin>> ComputeElementCosSin(const RotarySpec& spec,
                                                         const PositionsView& positions);

// OK when cos/sin of `num_tokens` tokens of `num_pairs` pairs stay within
// kMaxCosSinTableEntries entries; else InvalidArgument naming both.
absl::Status CheckCosSinEntries(int64_t num_tokens, int num_pairs);

// The cos/sin each pair of each token uses: result[t * (rotary_dim / 2) + j] =
// PairCosSin(inv_freq[j], positions[axis_map.axis[j]][t], attention_scaling). At most
// kMaxCosSinTableEntries entries. Refuses split halves (ComputeElementCosSin).
absl::StatusOr<std::vector<CosSin>> ComputeCosSin(const RotarySpec& spec,
                                                  const PositionsView& positions);

}  // namespace mrope

#endif  // MROPE_ROTARY_APPLY_H_
