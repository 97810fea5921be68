#ifndef MROPE_ROTARY_TENSOR_VIEW_H_
#define MROPE_ROTARY_TENSOR_VIEW_H_

// Non-owning views of the tensors M-RoPE reads and rotates in place. The same structs describe
// host memory (CPU reference, mrope/rotary/apply.h) and device memory (kernels/mrope_kernel.h).
// Strides are in elements, not bytes; the last (head_dim) dimension is always contiguous.

#include <cstdint>

namespace mrope {

enum class DType : uint8_t {
  kFloat32 = 0,
  kBFloat16 = 1,
  kFloat16 = 2,
  // OCP fp8 e4m3 ("e4m3fn": no infinities, max 448), an output format of the fused kernel
  // (mrope/rotary/fp8_e4m3.h); never an input.
  kFloat8E4m3 = 3,
};

// Bytes per stored element.
inline constexpr int ElementSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 4;
    case DType::kFloat8E4m3:
      return 1;
    default:
      return 2;
  }
}

// q [T][H][D] or k [T][Hk][D], e.g. a slice of a fused qkv buffer:
// element (t, h, d) is at data + t * token_stride + h * head_stride + d.
struct HeadsView {
  void* data = nullptr;
  DType dtype = DType::kFloat32;
  int64_t num_tokens = 0;
  int32_t num_heads = 0;
  int32_t head_dim = 0;
  int64_t token_stride = 0;
  int64_t head_stride = 0;
};

// Planar positions [3][T] (rows t, h, w): element (axis, i) is at data + axis * axis_stride + i.
struct PositionsView {
  const void* data = nullptr;
  bool is_int64 = true;  // int64 or int32
  int64_t num_tokens = 0;
  int64_t axis_stride = 0;
};

}  // namespace mrope

#endif  // MROPE_ROTARY_TENSOR_VIEW_H_
