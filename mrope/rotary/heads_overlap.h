#ifndef MROPE_ROTARY_HEADS_OVERLAP_H_
#define MROPE_ROTARY_HEADS_OVERLAP_H_

// The one check that q and k, rotated in place, share no element: used by the CPU reference
// (mrope/rotary/apply.h) and by the CUDA kernel's argument validation.

#include "absl/status/status.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {

// OK if the views `q` and `k` (each already validated: a known dtype, non-negative strides,
// an extent in bytes that fits int64) address no common byte; InvalidArgument naming both otherwise.
// Interleaved slices of one buffer (q and k of a fused qkv with one token stride) are
// disjoint when no token row of q meets one of k, which is checked exactly.
absl::Status ValidateDisjointHeads(const HeadsView& q, const HeadsView& k);

}  // namespace mrope

#endif  // MROPE_ROTARY_HEADS_OVERLAP_H_
