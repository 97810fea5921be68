#ifndef MROPE_KERNELS_UNFUSED_CHAIN_H_
#define MROPE_KERNELS_UNFUSED_CHAIN_H_

// The benchmark's baseline for the fused kernel: what a runtime runs today between the qkv
// projection and attention, as separate launches over bf16 storage (vLLM's RMSNorm on q and k,
// then its rotary, then reshape_and_cache):
//   1. EnqueueHeadRmsNorm: per-head RMSNorm of q and k in place (one launch for both);
//   2. LaunchMropeKernel (kernels/mrope_kernel.h): the rotary in place;
//   3. EnqueueCacheAppend: k and v into a paged cache (bf16, or fp8 e4m3 with one scale).
// Each is a plain, vectorised memory-bound kernel, measured against its own device copy.
// Not used by the library: it exists to be measured against.

#include <cstdint>

#include "kernels/mrope_kernel_args.h"

namespace mrope {
namespace unfused_chain {

// bf16 heads: element (t, h, d) at data + t * token_stride + h * head_stride + d; head_dim a
// multiple of 8.
struct Bf16Heads {
  void* data = nullptr;
  int64_t num_tokens = 0;
  int num_heads = 0;
  int head_dim = 0;
  int64_t token_stride = 0;
  int64_t head_stride = 0;
};

// w * x / sqrt(mean(x^2) + eps) per head of q and of k (bf16 weights [head_dim] each).
void EnqueueHeadRmsNorm(const Bf16Heads& q, const Bf16Heads& k, const void* q_weight,
                        const void* k_weight, float eps, GpuStream stream);

// Paged cache append as vLLM's reshape_and_cache: slot s of token t (slot_mapping[t], -1
// skipped) gets k and v at cache + (s / block_size) * block_stride + (s % block_size) *
// slot_stride + h * head_stride; fp8: value / *scale.
struct CacheAppendArgs {
  Bf16Heads k;
  Bf16Heads v;
  const int64_t* slot_mapping = nullptr;
  void* k_cache = nullptr;
  void* v_cache = nullptr;
  bool fp8 = false;
  const float* k_scale = nullptr;
  const float* v_scale = nullptr;
  int block_size = 16;
  int64_t block_stride = 0;
  int64_t slot_stride = 0;
  int64_t head_stride = 0;
};
void EnqueueCacheAppend(const CacheAppendArgs& args, GpuStream stream);

}  // namespace unfused_chain
}  // namespace mrope

#endif  // MROPE_KERNELS_UNFUSED_CHAIN_H_
