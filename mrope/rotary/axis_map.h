#ifndef MROPE_ROTARY_AXIS_MAP_H_
#define MROPE_ROTARY_AXIS_MAP_H_

// Builders for the per-pair axis table (AxisMap, mrope/rotary/rope_math.h): which position axis
// (t, h or w) drives each rotary pair j < rotary_dim / 2. Every builder validates its input and
// returns InvalidArgument naming the offending value.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mrope/rotary/rope_math.h"

namespace mrope {

// Blocked sections [s_t, s_h, s_w] (Qwen2-VL, Qwen2.5-VL, Omni): pairs [0, s_t) use t,
// [s_t, s_t + s_h) use h, the rest use w. The sections must be >= 0 and sum to num_pairs.
absl::StatusOr<AxisMap> BlockedAxisMap(absl::Span<const int32_t> sections, int num_pairs);

// Interleaved sections [s_t, s_h, s_w] (Qwen3-VL): pair j is h if j % 3 == 1 and j < 3 * s_h,
// w if j % 3 == 2 and j < 3 * s_w, t otherwise. Besides summing to num_pairs, the sections must
// be realizable: the rule must give exactly s_h pairs to h and s_w to w (e.g. [24, 20, 20] for
// 64 pairs; pairs 60..63 are t).
absl::StatusOr<AxisMap> InterleavedAxisMap(absl::Span<const int32_t> sections, int num_pairs);

// ERNIE-4.5-VL's sections [s_h, s_w, s_t] (mrope_section as its config gives it): pairs
// j < s_h + s_w are h for even j and w for odd j, the rest t. Besides summing to num_pairs, the
// sections must be realizable: s_h = ceil((s_h + s_w) / 2), e.g. [22, 22, 20] for 64 pairs.
absl::StatusOr<AxisMap> HwAlternatingThenTAxisMap(absl::Span<const int32_t> sections,
                                                  int num_pairs);

// openPangu-VL's interleaved sections [s_t, s_h, s_w] (vLLM's MRotaryEmbeddingInterleaved,
// get_mrope_interleaved_id_list with force_last): the last pair is t; pair by pair before it,
// the axis with pairs left whose share placed / count is smallest (t's count less the last
// pair; ties to the lowest axis), other than the previous pair's unless it alone has pairs
// left. E.g. [3, 3, 2]: t h w h t w h t. Besides summing to num_pairs, s_t must be >= 1.
absl::StatusOr<AxisMap> PanguInterleavedAxisMap(absl::Span<const int32_t> sections,
                                                int num_pairs);

// XD-RoPE (HunYuan-VL): 1 to kMaxAxes sections [s_0, s_1, ...], >= 0 and summing to num_pairs;
// element d of the NeoX halves takes axis i of the block of 2 * s_i elements holding it
// (XdAxis), so pair j's halves take axis XdAxis(j) and XdAxis(j + num_pairs) (split_halves).
absl::StatusOr<AxisMap> XdAxisMap(absl::Span<const int32_t> sections, int num_pairs);

// The map `layout` gives `sections` over num_pairs pairs (one of the five builders above).
absl::StatusOr<AxisMap> MropeAxisMap(MropeLayout layout, absl::Span<const int32_t> sections,
                                     int num_pairs);

// An explicit axis per pair (0 = t, 1 = h, 2 = w), for any other layout.
absl::StatusOr<AxisMap> ExplicitAxisMap(absl::Span<const int32_t> axes);

// 1-D RoPE: every pair uses axis t.
absl::StatusOr<AxisMap> TemporalAxisMap(int num_pairs);

// Checks that `map` has `num_pairs` pairs in [1, kMaxRotaryPairs] and only axes 0..2 (split
// halves: axes below kMaxAxes).
absl::Status ValidateAxisMap(const AxisMap& map, int num_pairs);

}  // namespace mrope

#endif  // MROPE_ROTARY_AXIS_MAP_H_
