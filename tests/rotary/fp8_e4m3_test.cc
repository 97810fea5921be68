// mrope's fp8 e4m3 conversion (mrope/rotary/fp8_e4m3.h: the fused kernel's CPU reference, and its
// device code below sm_89) against CUDA's own __nv_cvt_float_to_fp8(x, __NV_SATFINITE,
// __NV_E4M3), which the kernel runs on sm_89+ (cuda_fp8.h's host implementation: the same
// rounding the hardware instruction documents). Needs the CUDA headers, not a GPU.

#include "mrope/rotary/fp8_e4m3.h"

#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "mrope/rotary/half_float.h"

namespace mrope {
namespace {

uint8_t CudaFp8(float x) {
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
}

float FromBits(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

// Counts mismatches over `values` and reports the first.
void ExpectSameAsCuda(const std::vector<float>& values, const char* what) {
  int64_t mismatches = 0;
  for (const float x : values) {
    const uint8_t ours = FloatToFp8E4m3(x);
    const uint8_t cuda = CudaFp8(x);
    if (ours != cuda) {
      if (mismatches == 0) {
        ADD_FAILURE() << what << ": x = " << x << " (bits 0x" << std::hex
                      << [&] { uint32_t b; std::memcpy(&b, &x, 4); return b; }()
                      << "): mrope 0x" << int{ours} << ", CUDA 0x" << int{cuda};
      }
      ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0) << what << ": of " << values.size() << " values";
}

TEST(Fp8E4m3Test, EveryBFloat16ValueConvertsLikeCuda) {
  std::vector<float> values;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    values.push_back(BFloat16ToFloat(static_cast<uint16_t>(bits)));
  }
  ExpectSameAsCuda(values, "bf16");
}

TEST(Fp8E4m3Test, EveryFloat16ValueConvertsLikeCuda) {
  std::vector<float> values;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    values.push_back(HalfToFloat(static_cast<uint16_t>(bits)));
  }
  ExpectSameAsCuda(values, "fp16");
}

// fp32 values on both sides of every rounding boundary (the midpoints between neighbouring
// fp8 values, and the saturation edge), and random fp32 bit patterns.
TEST(Fp8E4m3Test, Fp32RoundingBoundariesAndRandomBitsConvertLikeCuda) {
  std::vector<float> values = {0.0f, -0.0f, 448.0f, -448.0f, 464.0f, -464.0f, 479.99f, 480.0f,
                               1e30f, -1e30f, std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN(),
                               -std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::denorm_min(), 0x1p-10f, 0x1p-9f,
                               0x1.8p-10f, 0x1.8p-9f};
  for (int code = 0; code < 0x7F; ++code) {
    const float a = Fp8E4m3ToFloat(static_cast<uint8_t>(code));
    const float b = code + 1 < 0x7F ? Fp8E4m3ToFloat(static_cast<uint8_t>(code + 1)) : 464.0f;
    const float mid = a + (b - a) / 2;  // exact: fp8 values have 4 significant bits
    uint32_t bits;
    std::memcpy(&bits, &mid, 4);
    for (const uint32_t near : {bits - 1, bits, bits + 1}) {
      values.push_back(FromBits(near));
      values.push_back(-FromBits(near));
    }
  }
  std::mt19937 rng(20261126);
  for (int i = 0; i < 1000000; ++i) values.push_back(FromBits(static_cast<uint32_t>(rng())));
  ExpectSameAsCuda(values, "fp32");
}

TEST(Fp8E4m3Test, WideningIsExactAndInvertsTheConversion) {
  for (int code = 0; code < 256; ++code) {
    const uint8_t v = static_cast<uint8_t>(code);
    const float x = Fp8E4m3ToFloat(v);
    const __half_raw half = __nv_cvt_fp8_to_halfraw(v, __NV_E4M3);
    const float cuda = HalfToFloat(half.x);
    if ((code & 0x7F) == 0x7F) {
      EXPECT_TRUE(std::isnan(x)) << code;
      EXPECT_TRUE(std::isnan(cuda)) << code;
      continue;
    }
    EXPECT_EQ(x, cuda) << "code 0x" << std::hex << code;
    EXPECT_EQ(std::signbit(x), (code & 0x80) != 0) << code;
    EXPECT_EQ(FloatToFp8E4m3(x), v) << "round trip of code 0x" << std::hex << code;
  }
}

TEST(Fp8E4m3Test, ScaledConversionDividesFirst) {
  EXPECT_EQ(ScaledFp8E4m3(3.0f, 2.0f), FloatToFp8E4m3(1.5f));
  EXPECT_EQ(ScaledFp8E4m3(1000.0f, 0.5f), 0x7E);  // 2000 saturates to 448
  EXPECT_EQ(ScaledFp8E4m3(-1000.0f, 0.5f), 0xFE);
  EXPECT_EQ(Fp8E4m3ToFloat(ScaledFp8E4m3(448.0f, 4.0f)), 112.0f);
}

}  // namespace
}  // namespace mrope
