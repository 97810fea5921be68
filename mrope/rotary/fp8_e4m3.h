#ifndef MROPE_ROTARY_FP8_E4M3_H_
#define MROPE_ROTARY_FP8_E4M3_H_

// fp8 e4m3 ("e4m3fn": 4 exponent bits, bias 7, 3 mantissa bits, no infinities, 0x7F / 0xFF
// NaN, largest finite 448) as the fused kernel stores it. Plain C++ and nvcc both compile
// this header, so the CPU reference and the kernel share one definition; its conversion is
// bit-exact with CUDA's __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3) (checked for every
// bf16 value in tests/rotary/fp8_e4m3_test.cc).

#include <cstdint>
#include <cstring>

#include "mrope/rotary/rope_math.h"

namespace mrope {

inline constexpr float kFp8E4m3Max = 448.0f;

MROPE_HOST_DEVICE inline uint32_t FloatBits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
#endif
}

MROPE_HOST_DEVICE inline float BitsFloat(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
#endif
}

// Rounds to nearest, ties to even; magnitudes beyond 448 (infinities included) saturate to
// +-448; NaN becomes 0x7F whatever its sign, as CUDA's conversion gives.
MROPE_HOST_DEVICE inline uint8_t FloatToFp8E4m3(float x) {
  const uint32_t bits = FloatBits(x);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return 0x7F;  // NaN
  if (magnitude >= 0x43E00000u) return static_cast<uint8_t>(sign | 0x7Eu);  // >= 448
  const int32_t exponent = static_cast<int32_t>(magnitude >> 23) - 127;
  if (exponent < -6) {
    // Below the smallest normal 2^-6: a multiple of 2^-9, q = round(|x| * 2^9) in [0, 8];
    // q == 8 is the encoding of 2^-6 itself.
    if (exponent < -10) return static_cast<uint8_t>(sign);  // |x| < 2^-10: rounds to 0
    const uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;
    const int shift = 14 - exponent;  // in [21, 24]
    uint32_t q = significand >> shift;
    const uint32_t rest = significand & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (q & 1u) != 0)) ++q;
    return static_cast<uint8_t>(sign | q);
  }
  // Normal: exponent field e + 7 in [1, 15], mantissa rounded from 23 to 3 bits (a carry
  // moves into the exponent, which is right); the largest result, 0x7E, is 448.
  uint32_t q = (static_cast<uint32_t>(exponent + 7) << 3) | ((magnitude >> 20) & 0x7u);
  const uint32_t rest = magnitude & 0xFFFFFu;
  if (rest > 0x80000u || (rest == 0x80000u && (q & 1u) != 0)) ++q;
  if (q > 0x7Eu) q = 0x7Eu;
  return static_cast<uint8_t>(sign | q);
}

// Exact widening (NaN encodings give a quiet NaN).
MROPE_HOST_DEVICE inline float Fp8E4m3ToFloat(uint8_t v) {
  const uint32_t sign = static_cast<uint32_t>(v & 0x80u) << 24;
  const uint32_t exponent = (v >> 3) & 0xFu;
  const uint32_t mantissa = v & 0x7u;
  if (exponent == 0xF && mantissa == 0x7) return BitsFloat(sign | 0x7FC00000u);
  if (exponent == 0) {
    // m * 2^-9, a float product that is exact.
    return BitsFloat(sign | FloatBits(static_cast<float>(mantissa) * 0.001953125f));
  }
  return BitsFloat(sign | ((exponent + 120) << 23) | (mantissa << 20));
}

// value / scale in fp32, then FloatToFp8E4m3: how vLLM's cache write quantises.
MROPE_HOST_DEVICE inline uint8_t ScaledFp8E4m3(float value, float scale) {
  return FloatToFp8E4m3(DivRounded(value, scale));
}

}  // namespace mrope

#endif  // MROPE_ROTARY_FP8_E4M3_H_
