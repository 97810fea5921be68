#ifndef MROPE_KERNELS_MROPE_KERNEL_VALIDATE_H_
#define MROPE_KERNELS_MROPE_KERNEL_VALIDATE_H_

// Host-side validation of an M-RoPE kernel launch. Needs no GPU and no CUDA toolkit: it looks
// at shapes, strides, dtypes, sections and pointer values only (it never dereferences them).

#include "absl/status/status.h"
#include "kernels/mrope_kernel_args.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {

// Returns OK if LaunchMropeKernel(spec, args, stream) would launch, else InvalidArgument
// naming the offending field and its value (e.g. "spec.head_dim=514 ..."). Checks:
//  - spec: head_dim in [1, 512]; rotary_dim even in [2, head_dim]; layout;
//    axis_map.num_pairs == rotary_dim / 2 with every axis in {0, 1, 2}; without a table,
//    inv_freq has rotary_dim / 2 finite entries and attention_scaling is finite;
//  - q and k: non-null data aligned to the element size; same dtype and num_tokens;
//    num_heads >= 1; head_dim == spec.head_dim; non-negative strides whose rows of head_dim
//    elements do not overlap (token-major [T][H][D] or head-major [H][T][D], padding allowed);
//    offsets fit in int64; q and k provably disjoint (disjoint address ranges, or token-major
//    slices of one buffer with the same token_stride whose per-token spans do not intersect,
//    as q and k of a fused qkv buffer);
//  - exactly one position source, with num_tokens equal to q's and aligned pointers;
//  - the table (if any): both pointers, max_position >= 1, row_stride >= rotary_dim / 2;
//  - error_flag non-null and 4-byte aligned.
absl::Status ValidateMropeKernelArgs(const RotarySpec& spec, const MropeKernelArgs& args);

}  // namespace mrope

#endif  // MROPE_KERNELS_MROPE_KERNEL_VALIDATE_H_
