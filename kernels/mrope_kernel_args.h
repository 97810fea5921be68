#ifndef MROPE_KERNELS_MROPE_KERNEL_ARGS_H_
#define MROPE_KERNELS_MROPE_KERNEL_ARGS_H_

// Arguments of the M-RoPE CUDA kernel (kernels/mrope_kernel.h). Plain C++: including this
// header needs neither the CUDA toolkit nor a GPU. Every pointer here is a device pointer
// (device or managed memory) that the kernel reads or writes; the host never dereferences it.

#include <cstdint>

#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/tensor_view.h"

// The CUDA runtime's stream type, declared exactly as <driver_types.h> does, so a cudaStream_t
// converts to GpuStream without this header including <cuda_runtime.h>.
struct CUstream_st;

namespace mrope {

// A cudaStream_t (nullptr: the legacy default stream).
using GpuStream = ::CUstream_st*;

// Bits the kernel ORs (atomically) into MropeKernelArgs::error_flag. A token that raises one
// is skipped entirely: none of its q or k heads is written, nothing is read out of bounds.
// A position on any axis outside [0, limit): limit = table.max_position with a table,
// kMaxPosition (2^24, mrope/rotary/rope_math.h: exact in float32) without one.
inline constexpr int kMropeErrorPositionOutOfRange = 1;
inline constexpr int kMropeErrorSequenceOutOfRange = 2;  // seq_id outside [0, num_seqs)

// Decode positions without a [num_axes][T] tensor. Every axis (t, h, w, ...) of token i gets
//   position = token_index[i] + delta[seq_id[i]]
// which is how Qwen VL models continue after a multimodal prompt (delta = the sequence's
// mrope_position_delta, token_index = the token's index in its sequence).
struct SequenceDeltaPositions {
  const int64_t* token_index = nullptr;  // [num_tokens]
  // [num_tokens] sequence of each token, or nullptr: token i belongs to sequence i (one token
  // per sequence, plain decode; then num_seqs must equal num_tokens). Ids outside
  // [0, num_seqs) raise kMropeErrorSequenceOutOfRange.
  const int32_t* seq_id = nullptr;
  const int64_t* delta = nullptr;  // [num_seqs]
  int64_t num_tokens = 0;
  int64_t num_seqs = 0;
};

// A precomputed fp32 cos/sin table in device memory: pair j at position p uses
// cos[p * row_stride + j] and sin[p * row_stride + j], j < rotary_dim / 2, exactly as stored
// (attention scaling included; RotarySpec::inv_freq and attention_scaling are not used).
// mrope::CosSinTable (mrope/rotary/cos_sin_table.h) copied to the device is row_stride =
// rotary_dim / 2; a vLLM-style cos_sin_cache [max_position][rotary_dim] is cos = cache,
// sin = cache + rotary_dim / 2, row_stride = rotary_dim. Positions outside
// [0, max_position) raise kMropeErrorPositionOutOfRange and are never looked up.
struct DeviceCosSinTable {
  const float* cos = nullptr;
  const float* sin = nullptr;
  int64_t max_position = 0;
  int64_t row_stride = 0;  // elements, >= rotary_dim / 2
};

// One in-place M-RoPE launch over q and k.
struct MropeKernelArgs {
  // q [T][Hq][D] and k [T][Hk][D], rotated in place; same dtype; Hq may differ from Hk (GQA).
  // Strided views (e.g. slices of a fused qkv buffer) are fine: rows of D elements must not
  // overlap, within a view or between q and k.
  HeadsView q;
  HeadsView k;

  // Exactly one position source: planar [num_axes][T] positions (num_axes =
  // AxisCount(spec.axis_map); positions.data != nullptr, int32 or int64; axis_stride 0
  // broadcasts one row to every axis), or sequence_delta
  // (sequence_delta.token_index != nullptr).
  PositionsView positions;
  SequenceDeltaPositions sequence_delta;

  // cos/sin source: table.cos == nullptr (default) computes them from RotarySpec::inv_freq
  // (double-precision sincos, see mrope/rotary/rope_math.h); otherwise the table is used.
  DeviceCosSinTable table;

  // kInverse rotates by -angle: the backward pass (the gradients of the rotated q and k in, the
  // gradients of their inputs out, in place).
  RotationDirection direction = RotationDirection::kForward;

  // Required: a device int the kernel ORs kMropeError* bits into (positions live on the
  // device, so only the device can check them). Never cleared by the kernel: the caller zeroes
  // it (e.g. cudaMemsetAsync) and reads it back whenever convenient, without a sync here.
  int* error_flag = nullptr;
};

}  // namespace mrope

#endif  // MROPE_KERNELS_MROPE_KERNEL_ARGS_H_
