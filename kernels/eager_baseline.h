#ifndef MROPE_KERNELS_EAGER_BASELINE_H_
#define MROPE_KERNELS_EAGER_BASELINE_H_

// The benchmark's baseline: M-RoPE the way eager PyTorch runs it (vLLM's
// MRotaryEmbedding.forward_native, HF apply_multimodal_rotary_pos_emb), one simple kernel per
// tensor op, bf16 storage with fp32 math per op:
//   gathered = cos_sin_cache[positions]                 index_select     [3][T][D]
//   cos, sin = weave(gathered) by the per-pair axis map  cat of sections  [T][D/2] each
//   for x in (q, k):  x1, x2 = chunk(x, 2)
//     o1 = x1 * cos - x2 * sin;  o2 = x2 * cos + x1 * sin   6 elementwise kernels
//     out = cat(o1, o2)                                      1 kernel
// 17 launches, each materialising its result. NeoX layout and rotary_dim == head_dim only.
// Not used by the library: it exists to be measured against.

#include <cstdint>

#include "kernels/mrope_kernel_args.h"

namespace mrope {
namespace eager_baseline {

// bf16 device buffers the eager path writes (PyTorch would allocate them per call; the
// benchmark allocates them once, outside the timed region). Sizes in elements.
struct EagerScratch {
  void* gathered = nullptr;  // 3 * T * head_dim
  void* cos = nullptr;       // T * head_dim / 2
  void* sin = nullptr;       // T * head_dim / 2
  void* products[4] = {};    // each T * max(Hq, Hk) * head_dim / 2
  void* halves[2] = {};      // each T * max(Hq, Hk) * head_dim / 2
};

struct EagerArgs {
  const void* q = nullptr;              // bf16 [T][Hq][D], contiguous
  const void* k = nullptr;              // bf16 [T][Hk][D], contiguous
  void* q_out = nullptr;                // bf16 [T][Hq][D]
  void* k_out = nullptr;                // bf16 [T][Hk][D]
  const int64_t* positions = nullptr;   // [3][T]
  const void* cos_sin_cache = nullptr;  // bf16 [max_position][D]: cos in [0, D/2), sin after
  const uint8_t* pair_axis = nullptr;   // [D/2] axis (0 t, 1 h, 2 w) of each pair
  int64_t num_tokens = 0;
  int num_q_heads = 0;
  int num_k_heads = 0;
  int head_dim = 0;
  EagerScratch scratch;
};

// Enqueues the 17 kernels on `stream`.
void EnqueueEagerMrope(const EagerArgs& args, GpuStream stream);

}  // namespace eager_baseline
}  // namespace mrope

#endif  // MROPE_KERNELS_EAGER_BASELINE_H_
