#ifndef MROPE_KERNELS_FUSED_KERNEL_VALIDATE_H_
#define MROPE_KERNELS_FUSED_KERNEL_VALIDATE_H_

// Host-side validation of a fused kernel launch (kernels/fused_kernel.h). Needs no GPU and no
// CUDA toolkit; never dereferences a pointer.

#include "absl/status/status.h"
#include "kernels/fused_kernel_args.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {

// OK if LaunchFusedMropeKernel(spec, args, stream) would launch, else InvalidArgument naming
// the field and its value. Checks:
//  - the spec, positions, table and error_flag exactly as ValidateMropeKernelArgs, and q and k
//    as it checks them (v too when a cache is written: k's dtype, tokens and heads);
//  - q_out (if set): q's tokens and heads, q's dtype or fp8 e4m3 with a non-null aligned
//    q_scale; k_out (if set): k's shape and dtype;
//  - each norm: a known form; with one, a non-null weight of fp32 / bf16 / fp16 aligned to
//    its size and a finite eps >= 0;
//  - with slot_mapping: an aligned pointer; the cache's k and v non-null, the input dtype or
//    fp8 e4m3 (then non-null aligned scales), num_blocks and block_size >= 1, num_heads ==
//    k.num_heads, head_dim == spec.head_dim, non-negative strides under which no two
//    (slot, head) rows overlap, byte extents and num_blocks * block_size within int64;
//    without it, k_out must be set (k would be computed and dropped);
//  - no written region (q_out or q in place, k_out unless it is k itself, the cache's k and
//    v) overlaps another written region or an input; fused-qkv slices count as disjoint when
//    their rows are.
absl::Status ValidateFusedMropeArgs(const RotarySpec& spec, const FusedMropeArgs& args);

}  // namespace mrope

#endif  // MROPE_KERNELS_FUSED_KERNEL_VALIDATE_H_
