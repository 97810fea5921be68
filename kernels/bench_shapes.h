#ifndef MROPE_KERNELS_BENCH_SHAPES_H_
#define MROPE_KERNELS_BENCH_SHAPES_H_

// The kernel benchmarks' model shapes, rotary spec and positions, shared with the host
// harness's access report (kernels/host_harness/access_report_test.cc), which runs the same
// shapes without a GPU.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mrope/rotary/rotary_spec.h"

namespace mrope {
namespace bench_util {

// Every benchmarked model's head_dim, all of it rotary.
inline constexpr int kHeadDim = 128;

// A model's attention heads (q and kv) and M-RoPE sections over the 64 pairs: [24, 20, 20]
// interleaved (Qwen3-VL), [16, 24, 24] blocked (Qwen2-VL, Qwen2.5-VL), or XD-RoPE's
// [16, 16, 16, 16] over four axes (HunYuan-VL).
struct ModelShape {
  const char* name;  // as the benchmark rows name it
  int hq;
  int hk;
  bool interleaved;
  int xd_axes = 0;  // > 0: XD-RoPE over this many axes
};

inline constexpr ModelShape kQwen2Vl7B = {"Qwen2-VL-7B", 28, 4, false};
inline constexpr ModelShape kQwen25Vl7B = {"Qwen2.5-VL-7B", 28, 4, false};
inline constexpr ModelShape kQwen3Vl8B = {"Qwen3-VL-8B", 32, 8, true};
inline constexpr ModelShape kQwen25Vl72B = {"Qwen2.5-VL-72B", 64, 8, false};
inline constexpr ModelShape kQwen3Vl30BA3B = {"Qwen3-VL-30B-A3B", 32, 4, true};
// HunYuanVLTextConfig's defaults (transformers 5.23.0: 32 heads, kv heads as many, head_dim
// 4096 / 32), with HunyuanOCR's xdrope_section.
inline constexpr ModelShape kHunYuanVl = {"HunYuan-VL", 32, 32, false, 4};

// Rows of the shape's planar positions: three, or its XD axes.
inline int NumAxes(const ModelShape& m) { return m.xd_axes > 0 ? m.xd_axes : 3; }

// The model's rotary spec (rope_theta 1e6).
RotarySpec MakeSpec(const ModelShape& m);

// [num_axes][T] positions of a video prompt: a text prefix, then t = base + 2 * frame,
// h = base + row, w = base + col on a 16 x 24 grid, base near 1e5; an axis past the third
// repeats axis % 3.
inline std::vector<int64_t> VideoPositions(int64_t tokens, int num_axes = 3) {
  std::vector<int64_t> positions(num_axes * tokens);
  const int64_t text = std::min<int64_t>(tokens / 8, 512);
  for (int64_t i = 0; i < tokens; ++i) {
    int64_t t = i, h = i, w = i;
    if (i >= text) {
      const int64_t g = i - text;
      const int64_t base = 100000 + text;
      t = base + 2 * (g / (16 * 24));
      h = base + (g / 24) % 16;
      w = base + g % 24;
    }
    for (int axis = 0; axis < num_axes; ++axis) {
      positions[axis * tokens + i] = axis % 3 == 0 ? t : axis % 3 == 1 ? h : w;
    }
  }
  return positions;
}

}  // namespace bench_util
}  // namespace mrope

#endif  // MROPE_KERNELS_BENCH_SHAPES_H_
