#ifndef MROPE_KERNELS_MROPE_KERNEL_H_
#define MROPE_KERNELS_MROPE_KERNEL_H_

// In-place M-RoPE on q and k in one CUDA launch.
//
//   mrope::MropeKernelArgs args;
//   args.q = {qkv, DType::kBFloat16, T, Hq, D, /*token_stride=*/(Hq + 2 * Hk) * D, D};
//   args.k = {qkv_k, DType::kBFloat16, T, Hk, D, (Hq + 2 * Hk) * D, D};
//   args.positions = {positions, /*is_int64=*/true, T, /*axis_stride=*/T};
//   args.error_flag = device_error_int;  // zeroed by the caller; 0 afterwards = no bad token
//   MROPE_RETURN_IF_ERROR(mrope::LaunchMropeKernel(spec, args, stream));
//
// Math: exactly mrope/rotary/rope_math.h (the CPU reference ApplyMropeReference uses the same
// header): angle = float32(inv_freq[j] * float32(position[axis[j]])), cos/sin by double
// sincos rounded to fp32 and scaled, fp32 rotation without FMA contraction, storage rounded to
// nearest even. fp32 storage matches the reference bit for bit whenever cos/sin match (always
// with a table built by rope_math.h; the device double sincos may differ from the host libm
// by one fp32 ulp in rare cases).
//
// Supported: fp32 / bf16 / fp16 storage; NeoX and GPT-J layouts; partial rotary (dims
// [rotary_dim, head_dim) are neither read nor written); any head_dim <= 512 with an even
// rotary_dim (kernels specialised for rotary_dim 64, 128 and 256); blocked, interleaved or explicit axis maps
// (RotarySpec::axis_map); GQA (Hq != Hk); strided views, e.g. slices of a fused qkv buffer.
//
// Work split: a block handles one or more tokens and all (or, for small T, a slice of) the
// Hq + Hk heads; cos/sin are computed once per token and pair into shared memory and reused
// by every head. Each thread owns both halves of the pairs it rotates (no in-place races).
//
// Vector path: 16-byte loads/stores when q.data and k.data are 16-byte aligned, their
// token/head strides are multiples of 16 bytes and (rotary_dim / 2) * element size is a
// multiple of 16 bytes. Otherwise a scalar path (one element per access) gives the same
// results, slower. Offsets are 64-bit throughout.
//
// Backward: args.direction = RotationDirection::kInverse rotates by -angle, which turns the
// gradients of the rotated q and k into the gradients of their inputs (in place; out of place
// through LaunchFusedMropeKernel without norms).
//
// Positions, cos/sin source: planar [num_axes][T] int32/int64 positions (num_axes =
// AxisCount(spec.axis_map): three, more for XD-RoPE) or, for decode, a per-token index plus
// per-sequence delta (SequenceDeltaPositions); cos/sin from spec.inv_freq or from an fp32 table
// (DeviceCosSinTable).
//
// XD-RoPE (spec.axis_map.split_halves, HunYuan-VL): a pair's two elements rotate by the
// cos/sin of their own axes, as ApplyMropeReference does; NeoX pairs only (GPT-J with split
// halves returns Unimplemented).
//
// Device-side errors (a position outside [0, kMaxPosition) or outside the table, a sequence id
// out of range) skip the whole token and set bits in args.error_flag (kMropeError*, see
// mrope_kernel_args.h); nothing is read out of bounds.

#include "absl/status/status.h"
#include "kernels/mrope_kernel_args.h"      // IWYU pragma: export
#include "kernels/mrope_kernel_validate.h"  // IWYU pragma: export
#include "mrope/rotary/rotary_spec.h"

namespace mrope {

// Validates (ValidateMropeKernelArgs) and enqueues the kernel on `stream`. Returns
// InvalidArgument before touching the GPU if the arguments are invalid, Internal if the launch
// itself fails (e.g. no device, or a sticky error from earlier work on this thread).
// Asynchronous: no host synchronisation, no allocation, no stream or device query; safe to
// capture in a CUDA graph (the kernel arguments, spec.inv_freq included, are copied by value
// at launch). num_tokens == 0 launches nothing and returns OK.
absl::Status LaunchMropeKernel(const RotarySpec& spec, const MropeKernelArgs& args,
                               GpuStream stream);

}  // namespace mrope

#endif  // MROPE_KERNELS_MROPE_KERNEL_H_
