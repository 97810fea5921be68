#include "kernels/bench_shapes.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "mrope/rotary/axis_map.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {
namespace bench_util {

RotarySpec MakeSpec(const ModelShape& m) {
  RotarySpec spec;
  spec.head_dim = kHeadDim;
  spec.rotary_dim = kHeadDim;
  constexpr int kPairs = kHeadDim / 2;
  spec.axis_map = (m.xd_axes > 0 ? XdAxisMap(std::vector<int32_t>(m.xd_axes, kPairs / m.xd_axes),
                                             kPairs)
                   : m.interleaved ? InterleavedAxisMap({24, 20, 20}, kPairs)
                                   : BlockedAxisMap({16, 24, 24}, kPairs))
                      .value();
  for (int j = 0; j < kPairs; ++j) {
    spec.inv_freq.push_back(static_cast<float>(std::pow(1e6, -2.0 * j / kHeadDim)));
  }
  return spec;
}

}  // namespace bench_util
}  // namespace mrope
