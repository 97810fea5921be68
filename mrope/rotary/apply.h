#ifndef MROPE_ROTARY_APPLY_H_
#define MROPE_ROTARY_APPLY_H_

// CPU reference M-RoPE: rotates q and k in place, using mrope/rotary/rope_math.h for every
// number (the CUDA kernel uses the same header). Compiled with -ffp-contract=off.

#include "absl/status/status.h"
#include "mrope/rotary/rotary_spec.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {

// Rotates q [T][Hq][D] and k [T][Hk][D] in place with cos/sin evaluated on the fly from
// `positions` [3][T]. Storage fp32, bf16 or fp16; math in fp32. Validates the spec, views and
// positions (shapes, strides, dtypes, sections) and returns InvalidArgument naming the field.
absl::Status ApplyMropeReference(const RotarySpec& spec, const PositionsView& positions,
                                 const HeadsView& q, const HeadsView& k);

}  // namespace mrope

#endif  // MROPE_ROTARY_APPLY_H_
