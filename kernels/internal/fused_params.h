#ifndef MROPE_KERNELS_INTERNAL_FUSED_PARAMS_H_
#define MROPE_KERNELS_INTERNAL_FUSED_PARAMS_H_

// Internal to kernels/: what the fused kernel's planner (fused_launch_plan.cc) hands its CUDA
// side (fused_kernel.cu). Plain C++ without Abseil, so nvcc and the host compiler see one
// definition.

#include <cstdint>

#include "kernels/fused_kernel_args.h"
#include "kernels/kernel_params.h"
#include "mrope/rotary/qk_norm_math.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace kernel_internal {

// Raw input values of the head slots a block works on (fp32, double-buffered): the partner of
// a rotated element is read from here. head slots per block * head_dim <= this.
inline constexpr int kFusedStageFloats = 2048;

// Passes of heads whose q/k loads a fused-kernel thread issues before its token group's first
// barrier, for `element_size`-byte values: for prefill the bytes in flight per SM, for decode
// the loads overlap the staging of positions and cos/sin. The 16-bit vector path only: fp32
// chunks take twice the registers and would spill.
constexpr int FusedPassesInFlight(int element_size, bool vectorized) {
  return vectorized && element_size == 2 ? kPassesInFlight : 1;
}

// Element (t, h, d) of a strided view at data + t * token_stride + h * head_stride + d.
struct StridedHeads {
  void* data = nullptr;
  int64_t token_stride = 0;
  int64_t head_stride = 0;
};

struct NormParams {
  QkNormForm form = QkNormForm::kNone;
  DType weight_dtype = DType::kFloat32;
  const void* weight = nullptr;
  float eps = 0.0f;
};

// The fused kernel's single by-value argument (__grid_constant__).
struct FusedParams {
  RotaryParams rotary;
  StridedHeads q;
  StridedHeads k;
  StridedHeads v;
  StridedHeads q_out;  // q itself for an in-place launch
  StridedHeads k_out;  // data == nullptr: no k view written
  DType q_out_dtype = DType::kFloat32;  // the input dtype or kFloat8E4m3
  const float* q_scale = nullptr;
  int64_t num_tokens = 0;
  int32_t num_q_heads = 0;
  int32_t num_k_heads = 0;
  int32_t head_dim = 0;
  int32_t rotary_dim = 0;
  int32_t heads_per_chunk = 0;  // q+k heads handled by one block; blockIdx.y picks the chunk
  RotaryLayout layout = RotaryLayout::kNeox;
  NormParams q_norm;
  NormParams k_norm;

  const int64_t* slot_mapping = nullptr;  // nullptr: no cache write
  int64_t num_slots = 0;                  // num_blocks * block_size
  int32_t block_size = 1;
  void* k_cache = nullptr;
  void* v_cache = nullptr;
  DType cache_dtype = DType::kFloat32;
  int64_t cache_block_stride = 0;
  int64_t cache_slot_stride = 0;
  int64_t cache_head_stride = 0;
  const float* k_scale = nullptr;
  const float* v_scale = nullptr;
  bool per_head_scale = false;
};
static_assert(sizeof(FusedParams) <= 4096, "FusedParams exceeds the kernel parameter limit");

struct FusedLaunchPlan {
  FusedParams params;
  DType dtype = DType::kFloat32;  // of q, k and v
  // 16-byte input chunks and whole-chunk output stores (every view aligned for them);
  // otherwise one element per access, same results.
  bool vectorized = false;
  // The kernel with XD-RoPE's forms (HunYuan-VL): a cos/sin per element, which split halves
  // need, and the norm of the rotated head; set when either is used.
  bool xd_forms = false;
  // block = (NormLanes lanes per head, head slots, tokens); grid = (token groups, chunks).
  uint32_t block_x = 1;
  uint32_t block_y = 1;
  uint32_t block_z = 1;
  uint32_t grid_x = 0;  // 0: nothing to launch
  uint32_t grid_y = 1;
};

// Launches the fused kernel `plan` describes on `stream` (fused_kernel.cu). Requires
// plan.grid_x > 0.
EnqueueResult EnqueueFusedKernel(const FusedLaunchPlan& plan, GpuStream stream);

}  // namespace kernel_internal
}  // namespace mrope

#endif  // MROPE_KERNELS_INTERNAL_FUSED_PARAMS_H_
