// Exhaustive checks of the 16-bit conversions against their definitions.

#include "mrope/rotary/half_float.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace mrope {
namespace {

uint32_t Bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof(b));
  return b;
}

// binary16 value from its definition: (-1)^s * 2^(e-15) * (1 + m/1024), subnormal m * 2^-24.
double HalfValue(uint16_t h) {
  const int sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1.0 + m / 1024.0, e - 15);
  if (e == 0x1f) v = m == 0 ? std::numeric_limits<double>::infinity() : std::nan("");
  return sign ? -v : v;
}

TEST(HalfFloatTest, HalfToFloatIsExactForEveryValue) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const double want = HalfValue(static_cast<uint16_t>(h));
    const float got = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
    } else {
      EXPECT_EQ(double{got}, want) << h;
      EXPECT_EQ(std::signbit(got), (h & 0x8000) != 0) << h;
    }
  }
}

TEST(HalfFloatTest, BFloat16ToFloatIsTheHighHalf) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    EXPECT_EQ(Bits(BFloat16ToFloat(static_cast<uint16_t>(h))), h << 16);
  }
}

// For every pair of adjacent finite values a < b of a 16-bit format (given by `widen` over the
// non-negative encodings in order), checks rounding at a, just above a, at the midpoint (ties to
// the even encoding), just below b, and the same for the negatives.
template <typename Widen, typename Narrow>
void CheckRoundToNearestEven(Widen widen, Narrow narrow, uint16_t max_finite) {
  for (uint32_t lo = 0; lo < max_finite; ++lo) {
    const uint16_t hi = static_cast<uint16_t>(lo + 1);
    const float a = widen(static_cast<uint16_t>(lo)), b = widen(hi);
    const float mid = static_cast<float>((double{a} + double{b}) / 2);  // exact in float32
    const uint16_t even = (lo % 2 == 0) ? static_cast<uint16_t>(lo) : hi;
    for (const float sign : {1.0f, -1.0f}) {
      const uint16_t neg = sign < 0 ? 0x8000 : 0;
      ASSERT_EQ(narrow(sign * a), lo | neg) << lo;
      ASSERT_EQ(narrow(sign * std::nextafter(a, b)), lo | neg) << lo;
      ASSERT_EQ(narrow(sign * std::nextafter(mid, a)), lo | neg) << lo;
      ASSERT_EQ(narrow(sign * mid), even | neg) << lo;
      ASSERT_EQ(narrow(sign * std::nextafter(mid, b)), hi | neg) << lo;
      ASSERT_EQ(narrow(sign * std::nextafter(b, a)), hi | neg) << lo;
    }
  }
}

TEST(HalfFloatTest, FloatToHalfRoundsToNearestEven) {
  CheckRoundToNearestEven(HalfToFloat, FloatToHalf, 0x7bff);
}

TEST(HalfFloatTest, FloatToBFloat16RoundsToNearestEven) {
  CheckRoundToNearestEven(BFloat16ToFloat, FloatToBFloat16, 0x7f7f);
}

TEST(HalfFloatTest, OverflowUnderflowAndSpecials) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65519.99f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // midpoint to the next binade: ties to even = inf
  EXPECT_EQ(FloatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-inf), 0xfc00);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // half of the smallest subnormal
  EXPECT_EQ(FloatToHalf(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(FloatToHalf(1e-30f), 0x0000);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(std::nanf("")))));
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(FloatToBFloat16(-inf), 0xff80);
  EXPECT_EQ(FloatToBFloat16(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(std::nanf("")))));
  // A NaN whose payload lives only in the low 16 bits must not become infinity.
  float low_payload_nan;
  const uint32_t bits = 0x7f800001u;
  std::memcpy(&low_payload_nan, &bits, sizeof(bits));
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(low_payload_nan))));
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(low_payload_nan))));
}

}  // namespace
}  // namespace mrope
