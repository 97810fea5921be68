#ifndef MROPE_KERNELS_FUSED_KERNEL_H_
#define MROPE_KERNELS_FUSED_KERNEL_H_

// One launch from the qkv projection to attention-ready q and a paged KV cache. For every
// token and head:
//   1. q and k: optional per-head RMSNorm, x * r * w (kWeight) or x * r * (1 + w)
//      (kOnePlusWeight), r = 1 / sqrt(sum(x^2) / D + eps), in fp32 (mrope/rotary/qk_norm_math.h
//      fixes the summation order, so the CPU reference matches bit for bit);
//   2. M-RoPE of the first rotary_dim dims, exactly as LaunchMropeKernel (same math header,
//      sources and axis maps), on the fp32 values: no rounding between norm and rotary;
//   3. q rounded once to q_out's dtype (in place or another buffer, or fp8 e4m3 / scale);
//   4. k (normalised, rotated) and v (as read) written to the paged cache at slot_mapping[t],
//      in the input dtype or fp8 e4m3 (value / scale, saturating at +-448); optionally k also
//      back to k_out.
//
//   mrope::FusedMropeArgs args;
//   args.q = {qkv, DType::kBFloat16, T, Hq, D, (Hq + 2 * Hk) * D, D};
//   args.k = {qkv + Hq * D, DType::kBFloat16, T, Hk, D, (Hq + 2 * Hk) * D, D};
//   args.v = {qkv + (Hq + Hk) * D, DType::kBFloat16, T, Hk, D, (Hq + 2 * Hk) * D, D};
//   args.q_norm = {QkNormForm::kWeight, q_norm_weight, DType::kBFloat16, 1e-6f};
//   args.k_norm = {QkNormForm::kWeight, k_norm_weight, DType::kBFloat16, 1e-6f};
//   args.positions = {positions, /*is_int64=*/true, T, /*axis_stride=*/T};
//   args.slot_mapping = slots;
//   args.cache = {k_cache, v_cache, DType::kBFloat16, num_blocks, 16, Hk, D,
//                 16 * Hk * D, Hk * D, D};   // NHD
//   args.error_flag = device_error_int;
//   MROPE_RETURN_IF_ERROR(mrope::LaunchFusedMropeKernel(spec, args, stream));
//
// Device-side errors (bad position, sequence id or slot) skip the whole token and set
// kMropeError* bits in args.error_flag; nothing is read or written out of bounds.

#include "absl/status/status.h"
#include "kernels/fused_kernel_args.h"      // IWYU pragma: export
#include "kernels/fused_kernel_validate.h"  // IWYU pragma: export
#include "kernels/mrope_kernel_args.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {

// Validates (ValidateFusedMropeArgs) and enqueues the fused kernel on `stream`. Asynchronous, no allocation, no host
// synchronisation, graph-capturable; num_tokens == 0 launches nothing. Internal if the
// launch itself fails.
absl::Status LaunchFusedMropeKernel(const RotarySpec& spec, const FusedMropeArgs& args,
                                    GpuStream stream);

}  // namespace mrope

#endif  // MROPE_KERNELS_FUSED_KERNEL_H_
