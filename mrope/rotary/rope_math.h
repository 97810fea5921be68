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
// Most axes a rotary reads: XD-RoPE (MropeLayout::kXd) takes one per mrope_section entry.
inline constexpr int kMaxAxes = 8;

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

// ERNIE-4.5-VL: sections [s_h, s_w, s_t] (that order); pairs j < s_h + s_w alternate h (even j)
// and w (odd j), the rest are t. With [22, 22, 20]: h on 0, 2, ..., 42, w on 1, 3, ..., 43, t on
// 44..63.
MROPE_HOST_DEVICE inline int HwAlternatingThenTAxis(int pair, int hw_pairs) {
  if (pair >= hw_pairs) return kAxisT;
  return pair % 2 == 0 ? kAxisH : kAxisW;
}

// The named rules that give each pair its axis from a model's mrope_section.
enum class MropeLayout : uint8_t {
  kBlocked = 0,             // BlockedAxis: [t, h, w] blocks (Qwen2-VL, GLM)
  kInterleaved = 1,         // InterleavedAxis: Qwen3-VL's t h w t h w ...
  kHwAlternatingThenT = 2,  // HwAlternatingThenTAxis: ERNIE-4.5-VL
  kXd = 3,                  // XdAxis: HunYuan-VL's XD-RoPE, any number of axes, halves apart
  kPanguInterleaved = 4,    // openPangu-VL's (vLLM's MRotaryEmbeddingInterleaved): axis_map.h
};

// XD-RoPE (HunYuan-VL): element d < rotary_dim of a head (NeoX halves) takes the axis of the
// block of `sections` (in order, each 2 * s elements wide) that holds d, at frequency
// d mod rotary_dim / 2. A pair's two elements can so take different axes: with [16, 16, 16,
// 16], pair j < 32 rotates its first element by axis 0 and its second by axis 2.
MROPE_HOST_DEVICE inline int XdAxis(int element, const int32_t* sections, int num_sections) {
  int end = 0;
  for (int i = 0; i < num_sections; ++i) {
    end += 2 * sections[i];
    if (element < end) return i;
  }
  return num_sections - 1;
}

// Per-pair axis table: axis[j] drives rotary pair j, for j < num_pairs (= rotary_dim / 2).
// Built on the host (mrope/rotary/axis_map.h) and copied by value into kernels.
struct AxisMap {
  int num_pairs = 0;
  uint8_t axis[kMaxRotaryPairs] = {};
  // XD-RoPE: the second element of pair j takes the cos/sin of axis second_axis[j] (the
  // first: axis[j]); false for every other layout, whose pairs take one axis.
  bool split_halves = false;
  uint8_t second_axis[kMaxRotaryPairs] = {};
};

// The axes `map` reads: 1 + its largest axis, at least kNumAxes (planar [3][T] positions).
inline int AxisCount(const AxisMap& map) {
  int count = kNumAxes;
  for (int j = 0; j < map.num_pairs; ++j) {
    if (map.axis[j] + 1 > count) count = map.axis[j] + 1;
    if (map.split_halves && map.second_axis[j] + 1 > count) count = map.second_axis[j] + 1;
  }
  return count;
}

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

// a * b + c with one rounding, the same on host and device.
MROPE_HOST_DEVICE inline float FusedMulAdd(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// x rounded to the nearest integer, ties to even.
MROPE_HOST_DEVICE inline float RoundToNearestEven(float x) {
#if defined(__CUDA_ARCH__)
  return rintf(x);
#else
  return std::nearbyint(x);
#endif
}

struct CosSin {
  float cos;
  float sin;
};

// How cos/sin of an angle are evaluated (RotarySpec::sincos_math).
enum class SinCosMath : uint8_t {
  // In double, rounded to float32: HF's values; the default. Double precision runs at 1/64 of
  // fp32 speed on L40S / RTX 4090-class GPUs, where it costs 20-70% of the kernel's time.
  kDouble = 0,
  // In float32 only (Float32CosSin): within 1e-6 absolute of kDouble for angles in
  // [0, 2^24), bit-identical on host and device.
  kFloat32 = 1,
};

inline constexpr bool IsSinCosMath(SinCosMath math) {
  return math == SinCosMath::kDouble || math == SinCosMath::kFloat32;
}

// angle - k * pi/2 in float32, pi/2 split in three parts (Cody-Waite). The first step is
// exact: k * kPio2Hi has no bits below 2^-23, and neither has an angle >= 1.
MROPE_HOST_DEVICE inline float ReduceByHalfPi(float angle, float k) {
  constexpr float kPio2Hi = 1.57079637050628662109375f;  // float(pi/2)
  constexpr float kPio2Mid = -4.371138828673793e-8f;     // float(pi/2 - kPio2Hi)
  constexpr float kPio2Lo = -1.7151245100058819e-15f;    // float(the rest)
  float r = FusedMulAdd(-k, kPio2Hi, angle);
  r = FusedMulAdd(-k, kPio2Mid, r);
  return FusedMulAdd(-k, kPio2Lo, r);
}

// cos and sin of a float32 angle in [0, 2^24) with float32 arithmetic alone: reduction by
// pi/2 to [-pi/4, pi/4], then the Cephes minimax polynomials. Explicit FMAs and rounded
// products only, so host and device agree bit for bit. Never the __sinf family, which is
// inaccurate at large angles.
MROPE_HOST_DEVICE inline CosSin Float32CosSin(float angle) {
  constexpr float kTwoOverPi = 0.636619772367581343f;
  constexpr float kPiOver4 = 0.785398163397448310f;
  float k = RoundToNearestEven(MulRounded(angle, kTwoOverPi));
  float r = ReduceByHalfPi(angle, k);
  // Near 2^24 the rounded product can miss the nearest multiple of pi/2 by one.
  if (r > kPiOver4) {
    k += 1.0f;
    r = ReduceByHalfPi(angle, k);
  } else if (r < -kPiOver4) {
    k -= 1.0f;
    r = ReduceByHalfPi(angle, k);
  }
  const float z = MulRounded(r, r);
  float sin_poly = FusedMulAdd(-1.9515295891e-4f, z, 8.3321608736e-3f);
  sin_poly = FusedMulAdd(sin_poly, z, -1.6666654611e-1f);
  const float sin_r = FusedMulAdd(MulRounded(sin_poly, z), r, r);
  float cos_poly = FusedMulAdd(2.443315711809948e-5f, z, -1.388731625493765e-3f);
  cos_poly = FusedMulAdd(cos_poly, z, 4.166664568298827e-2f);
  const float cos_r = FusedMulAdd(MulRounded(cos_poly, z), z, FusedMulAdd(-0.5f, z, 1.0f));
  switch (static_cast<int64_t>(k) & 3) {
    case 0:
      return {cos_r, sin_r};
    case 1:
      return {-sin_r, cos_r};
    case 2:
      return {-cos_r, -sin_r};
    default:
      return {sin_r, -cos_r};
  }
}

// cos and sin of a float32 angle, rounded to float32 (kDouble: evaluated in double, accurate
// at any angle below 2^24 rad and beyond; kFloat32: Float32CosSin), then scaled by
// `attention_scaling` (1 except for YaRN / LongRoPE).
MROPE_HOST_DEVICE inline CosSin AngleCosSin(float angle, float attention_scaling,
                                            SinCosMath math = SinCosMath::kDouble) {
  float c, s;
  if (math == SinCosMath::kFloat32) {
    const CosSin cs = Float32CosSin(angle);
    c = cs.cos;
    s = cs.sin;
  } else {
    const double a = static_cast<double>(angle);
#if defined(__CUDA_ARCH__)
    double sd, cd;
    ::sincos(a, &sd, &cd);
#else
    const double sd = std::sin(a);
    const double cd = std::cos(a);
#endif
    c = static_cast<float>(cd);
    s = static_cast<float>(sd);
  }
  return {MulRounded(c, attention_scaling), MulRounded(s, attention_scaling)};
}

// cos/sin of the pair with `inv_freq` at `position` (an integer-valued float32; integers below
// 2^24 are exact): AngleCosSin(RotaryAngle(inv_freq, position), attention_scaling, math). The
// one composition the table, the on-the-fly path and the kernel all use.
MROPE_HOST_DEVICE inline CosSin PairCosSin(float inv_freq, float position,
                                           float attention_scaling,
                                           SinCosMath math = SinCosMath::kDouble) {
  return AngleCosSin(RotaryAngle(inv_freq, position), attention_scaling, math);
}

// Which way a pair is rotated: by +angle (the forward pass), or by -angle, the inverse and
// transpose of the rotation, which maps the gradient of a rotated q or k to the gradient of
// its input (the backward pass).
enum class RotationDirection : uint8_t { kForward = 0, kInverse = 1 };

inline constexpr bool IsRotationDirection(RotationDirection d) {
  return d == RotationDirection::kForward || d == RotationDirection::kInverse;
}

// cos/sin of the pair for `direction`: the inverse negates sin (exactly).
MROPE_HOST_DEVICE inline CosSin ForDirection(CosSin cs, RotationDirection direction) {
  return direction == RotationDirection::kInverse ? CosSin{cs.cos, -cs.sin} : cs;
}

// Rotates one pair in fp32: returns (x1*c - x2*s, x2*c + x1*s), each product rounded.
struct RotatedPair {
  float first;
  float second;
};
// Each half on its own, for code that owns one element of a pair (the fused kernel).
MROPE_HOST_DEVICE inline float RotatedFirst(float x1, float x2, CosSin cs) {
  return AddRounded(MulRounded(x1, cs.cos), -MulRounded(x2, cs.sin));
}
MROPE_HOST_DEVICE inline float RotatedSecond(float x1, float x2, CosSin cs) {
  return AddRounded(MulRounded(x2, cs.cos), MulRounded(x1, cs.sin));
}
MROPE_HOST_DEVICE inline RotatedPair RotatePair(float x1, float x2, CosSin cs) {
  return {RotatedFirst(x1, x2, cs), RotatedSecond(x1, x2, cs)};
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
