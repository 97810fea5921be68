#ifndef MROPE_ROTARY_ROPE_MATH_H_
#define MROPE_ROTARY_ROPE_MATH_H_

// The M-RoPE math that exists exactly once: which position axis drives each frequency pair,
// the angle of a pair, its cos/sin, and the rotation of one pair. Plain C++ and nvcc both
// compile this header (functions are __host__ __device__ under nvcc), so the CPU reference
// and the CUDA kernel cannot drift apart.
//
// Conventions (HF transformers, bit-exact where it matters):
//   angle(pair j)  = float32(inv_freq[j] * float32(position[axis(j)]))     one rounding
//   cos/sin        = evaluated in double from the float32 angle, rounded to float32
//   rotation       = y1 = x1*c - x2*s, y2 = x2*c + x1*s, each product rounded to float32 and
//                    no fused multiply-add (HF: q*cos + rotate_half(q)*sin).

#include <cstdint>

#if defined(__CUDACC__)
#define MROPE_HOST_DEVICE __host__ __device__
#else
#define MROPE_HOST_DEVICE
#endif

#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

namespace mrope {

// Largest head_dim (and rotary_dim) mrope supports; pairs are rotary_dim / 2.
inline constexpr int kMaxHeadDim = 512;
inline constexpr int kMaxRotaryPairs = kMaxHeadDim / 2;

// Positions must lie in [0, kMaxPosition): integers below 2^24 are exact in float32, which is
// what RotaryAngle multiplies by.
inline constexpr int64_t kMaxPosition = int64_t{1} << 24;

// Position axes of M-RoPE: temporal, height, width (rows of a planar [3][T] position tensor).
enum PositionAxis : uint8_t { kAxisT = 0, kAxisH = 1, kAxisW = 2 };
inline constexpr int kNumAxes = 3;

// How the rotary pairs (x[j], x[j + rotary_dim/2]) vs (x[2j], x[2j+1]) are formed.
enum class RotaryLayout : uint8_t {
  kNeox = 0,  // rotate-half: pair j = (x[j], x[j + rotary_dim / 2]); HF/Qwen default
  kGptj = 1,  // adjacent: pair j = (x[2j], x[2j + 1])
};

// Blocked sections (Qwen2-VL, Qwen2.5-VL, Omni): pairs [0, s_t) use t, [s_t, s_t + s_h) use h,
// the rest use w. E.g. [16, 24, 24]: [0,16) t, [16,40) h, [40,64) w.
MROPE_HOST_DEVICE inline int BlockedAxis(int pair, int section_t, int section_h) {
  if (pair < section_t) return kAxisT;
  if (pair < section_t + section_h) return kAxisH;
  return kAxisW;
}

// Interleaved sections (Qwen3-VL): pair j is h if j % 3 == 1 and j < 3 * s_h, w if j % 3 == 2
// and j < 3 * s_w, t otherwise. With [24, 20, 20], pairs 60..63 are t.
MROPE_HOST_DEVICE inline int InterleavedAxis(int pair, int section_h, int section_w) {
  if (pair % 3 == 1 && pair < 3 * section_h) return kAxisH;
  if (pair % 3 == 2 && pair < 3 * section_w) return kAxisW;
  return kAxisT;
}

// Per-pair axis table: axis[j] drives rotary pair j, for j < num_pairs (= rotary_dim / 2).
// Built on the host (mrope/rotary/axis_map.h) and copied by value into kernels.
struct AxisMap {
  int num_pairs = 0;
  uint8_t axis[kMaxRotaryPairs] = {};
};

// Products and sums rounded to float32 one at a time: no FMA contraction on the device
// (host code that must match is built with -ffp-contract=off).
MROPE_HOST_DEVICE inline float MulRounded(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
MROPE_HOST_DEVICE inline float AddRounded(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
MROPE_HOST_DEVICE inline float DivRounded(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// Angle of one pair at one position, as HF computes it: float32(inv_freq * float32(position)).
MROPE_HOST_DEVICE inline float RotaryAngle(float inv_freq, float position) {
  return MulRounded(inv_freq, position);
}

// cos and sin of a float32 angle, evaluated in double (accurate at any angle below 2^24 rad and
// beyond; never the __sinf family) and rounded to float32, then scaled by `attention_scaling`
// (1 except for YaRN / LongRoPE).
struct CosSin {
  float cos;
  float sin;
};
MROPE_HOST_DEVICE inline CosSin AngleCosSin(float angle, float attention_scaling) {
  const double a = static_cast<double>(angle);
#if defined(__CUDA_ARCH__)
  double s, c;
  ::sincos(a, &s, &c);
#else
  const double s = std::sin(a);
  const double c = std::cos(a);
#endif
  return {MulRounded(static_cast<float>(c), attention_scaling),
          MulRounded(static_cast<float>(s), attention_scaling)};
}

// cos/sin of the pair with `inv_freq` at `position` (an integer-valued float32; integers below
// 2^24 are exact): AngleCosSin(RotaryAngle(inv_freq, position), attention_scaling). The one
// composition the table, the on-the-fly path and the kernel all use.
MROPE_HOST_DEVICE inline CosSin PairCosSin(float inv_freq, float position,
                                           float attention_scaling) {
  return AngleCosSin(RotaryAngle(inv_freq, position), attention_scaling);
}

// Rotates one pair in fp32: returns (x1*c - x2*s, x2*c + x1*s), each product rounded.
struct RotatedPair {
  float first;
  float second;
};
MROPE_HOST_DEVICE inline RotatedPair RotatePair(float x1, float x2, CosSin cs) {
  return {AddRounded(MulRounded(x1, cs.cos), -MulRounded(x2, cs.sin)),
          AddRounded(MulRounded(x2, cs.cos), MulRounded(x1, cs.sin))};
}

// Element offsets of pair j inside one head for a layout and rotary_dim.
MROPE_HOST_DEVICE inline int PairFirstIndex(RotaryLayout layout, int pair) {
  return layout == RotaryLayout::kNeox ? pair : 2 * pair;
}
MROPE_HOST_DEVICE inline int PairSecondIndex(RotaryLayout layout, int pair, int rotary_dim) {
  return layout == RotaryLayout::kNeox ? pair + rotary_dim / 2 : 2 * pair + 1;
}

}  // namespace mrope

#endif  // MROPE_ROTARY_ROPE_MATH_H_
