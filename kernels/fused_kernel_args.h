#ifndef MROPE_KERNELS_FUSED_KERNEL_ARGS_H_
#define MROPE_KERNELS_FUSED_KERNEL_ARGS_H_

// Arguments of the fused kernel (kernels/fused_kernel.h): per-head RMSNorm of q and k, M-RoPE,
// q written out and k / v appended to a paged KV cache, in one launch. Plain C++: including
// this header needs neither the CUDA toolkit nor a GPU. Every pointer is a device pointer.

#include <cstdint>

#include "kernels/mrope_kernel_args.h"
#include "mrope/rotary/qk_norm_math.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {

// A slot_mapping entry outside [-1, num_blocks * block_size): the token is skipped entirely.
inline constexpr int kMropeErrorSlotOutOfRange = 4;

// Per-head RMSNorm of q or k: before the rotary (Qwen3's q_norm / k_norm), or of the rotated
// head (kWeightAfterRotary, HunYuan-VL's query_layernorm / key_layernorm). With form == kNone
// nothing else here is read.
struct QkNormArgs {
  QkNormForm form = QkNormForm::kNone;
  const void* weight = nullptr;  // [head_dim]
  DType weight_dtype = DType::kFloat32;  // fp32, bf16 or fp16
  float eps = 1e-6f;
};

// A paged KV cache: element d of head h of the token in slot s = block * block_size + offset
// is at k + block * block_stride + offset * slot_stride + h * head_stride + d (and the same
// in v). NHD [blocks][block_size][H][D]: slot_stride = H * D, head_stride = D; HND
// [blocks][H][block_size][D]: head_stride = block_size * D, slot_stride = D. Strides in
// elements.
struct PagedKvCache {
  void* k = nullptr;
  void* v = nullptr;
  DType dtype = DType::kBFloat16;  // the input dtype, or kFloat8E4m3
  int64_t num_blocks = 0;
  int32_t block_size = 0;
  int32_t num_heads = 0;  // must equal k.num_heads
  int32_t head_dim = 0;   // must equal spec.head_dim
  int64_t block_stride = 0;
  int64_t slot_stride = 0;
  int64_t head_stride = 0;
  // kFloat8E4m3 only: stored = fp8_e4m3_satfinite(value / scale), fp32 scales in device
  // memory, one per tensor or (per_head_scale) one per head.
  const float* k_scale = nullptr;
  const float* v_scale = nullptr;
  bool per_head_scale = false;
};

struct FusedMropeArgs {
  // Inputs [T][H][D] (strided views, e.g. of a fused qkv buffer; q may skip a per-head gate).
  // q, k and v share one dtype (fp32, bf16 or fp16) and num_tokens; v.num_heads ==
  // k.num_heads. v is read only when a cache is written.
  HeadsView q;
  HeadsView k;
  HeadsView v;

  // Where q goes: q_out.data == nullptr writes it back into q; otherwise q_out has q's shape
  // and q's dtype or kFloat8E4m3 (then q_scale: a device fp32, stored = fp8(value / scale)).
  HeadsView q_out;
  const float* q_scale = nullptr;
  // Optional: the normalised, rotated k in q's dtype (k_out.data == k.data writes it back in
  // place; nullptr writes no k view).
  HeadsView k_out;

  QkNormArgs q_norm;
  QkNormArgs k_norm;

  // kInverse rotates by -angle (the rotary's backward pass: gradients in, gradients out, with q
  // and k written as above); both norms must then be kNone (the norm's backward is not
  // provided).
  RotationDirection direction = RotationDirection::kForward;

  // Position and cos/sin sources exactly as MropeKernelArgs (one position source).
  PositionsView positions;
  SequenceDeltaPositions sequence_delta;
  DeviceCosSinTable table;

  // [T] int64 cache slots: -1 skips the token's cache write (q and k_out are still written);
  // anything else outside [0, num_blocks * block_size) raises kMropeErrorSlotOutOfRange and
  // skips the whole token. nullptr: no cache write (cache is ignored; k_out must be set).
  const int64_t* slot_mapping = nullptr;
  PagedKvCache cache;

  // As MropeKernelArgs::error_flag: a device int the kernel ORs kMropeError* bits into.
  int* error_flag = nullptr;
};

}  // namespace mrope

#endif  // MROPE_KERNELS_FUSED_KERNEL_ARGS_H_
