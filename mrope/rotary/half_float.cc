#include "mrope/rotary/half_float.h"

#include <cstdint>
#include <cstring>

namespace mrope {
namespace {

uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float BitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Drops the low `shift` bits of `mantissa`, rounding to nearest, ties to even.
uint32_t ShiftRightRoundEven(uint32_t mantissa, int shift) {
  const uint32_t kept = mantissa >> shift;
  const uint32_t rest = mantissa & ((uint32_t{1} << shift) - 1);
  const uint32_t half = uint32_t{1} << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
}

}  // namespace

float BFloat16ToFloat(uint16_t bits) { return BitsToFloat(uint32_t{bits} << 16); }

uint16_t FloatToBFloat16(float value) {
  const uint32_t bits = FloatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep sign and top payload, force quiet
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  // Rounding can carry into the exponent; the largest finite values round up to infinity.
  return static_cast<uint16_t>(ShiftRightRoundEven(bits, 16));
}

float HalfToFloat(uint16_t bits) {
  const uint32_t sign = uint32_t{bits & 0x8000u} << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return BitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) return BitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24, exact in float32.
  const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
  return sign != 0 ? -magnitude : magnitude;
}

uint16_t FloatToHalf(float value) {
  const uint32_t bits = FloatBits(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) {  // NaN
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  const int exponent = static_cast<int>(magnitude >> 23);  // biased float exponent
  if (exponent >= 113) {
    // Normal half range or beyond: rebias, round the mantissa; a carry (including into the
    // exponent field 31 = infinity) is the correct rounding.
    const uint32_t rounded = ShiftRightRoundEven(magnitude - (uint32_t{112} << 23), 13);
    return static_cast<uint16_t>(sign | (rounded >= 0x7c00u ? 0x7c00u : rounded));
  }
  // Subnormal half (or zero): value = (2^23 + m) * 2^(e - 150) = q * 2^-24 with
  // q = (2^23 + m) >> (126 - e). Float subnormals and anything below 2^-25 round to zero.
  const int shift = 126 - exponent;
  if (exponent == 0 || shift > 24) return sign;
  const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
  return static_cast<uint16_t>(sign | ShiftRightRoundEven(mantissa, shift));
}

}  // namespace mrope
