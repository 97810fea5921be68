#ifndef MROPE_ROTARY_ROTARY_SPEC_H_
#define MROPE_ROTARY_ROTARY_SPEC_H_

#include <cstdint>
#include <vector>

#include "mrope/rotary/rope_math.h"

namespace mrope {

// Everything needed to rotate q/k for one model: shared by the CPU reference apply and the
// CUDA kernel's host API.
struct RotarySpec {
  int32_t head_dim = 0;    // D: the last dimension of q and k
  int32_t rotary_dim = 0;  // even, <= head_dim; dims [rotary_dim, head_dim) pass through
  RotaryLayout layout = RotaryLayout::kNeox;
  AxisMap axis_map;             // axis_map.num_pairs == rotary_dim / 2
  std::vector<float> inv_freq;  // rotary_dim / 2 entries, scaling already applied
  float attention_scaling = 1.0f;  // multiplies cos and sin (YaRN, LongRoPE); 1 otherwise
  // How cos/sin are evaluated on the fly (a cos/sin table holds what it was built with).
  // kFloat32 suits GPUs with slow double precision; the CPU reference follows it too.
  SinCosMath sincos_math = SinCosMath::kDouble;
};

}  // namespace mrope

#endif  // MROPE_ROTARY_ROTARY_SPEC_H_
