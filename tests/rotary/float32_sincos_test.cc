// Float32CosSin (rope_math.h, SinCosMath::kFloat32) against double sin/cos: within 1e-6
// absolute for every angle the kernel can see, [0, 2^24), at the angles real positions give
// (inv_freq * integer position) and at random and edge angles.

#include <cmath>
#include <cstdint>
#include <random>

#include "gtest/gtest.h"
#include "mrope/rotary/rope_math.h"

namespace mrope {
namespace {

constexpr double kTolerance = 1e-6;

struct MaxError {
  double value = 0;
  float angle = 0;
  void Add(float angle_in) {
    const CosSin cs = Float32CosSin(angle_in);
    const double a = angle_in;
    const double error = std::max(std::abs(cs.cos - std::cos(a)), std::abs(cs.sin - std::sin(a)));
    if (error > value) {
      value = error;
      angle = angle_in;
    }
  }
};

TEST(Float32SinCosTest, RandomAnglesUpTo2To24) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> angle(0.0f, 16777216.0f);
  MaxError max;
  for (int i = 0; i < 2000000; ++i) max.Add(angle(rng));
  EXPECT_LE(max.value, kTolerance) << "at angle " << max.angle;
}

TEST(Float32SinCosTest, AnglesOfRealPositions) {
  MaxError max;
  for (int j = 0; j < 64; ++j) {  // rope_theta 1e6, rotary_dim 128
    const float inv_freq = static_cast<float>(std::pow(1e6, -2.0 * j / 128));
    for (int64_t p = 0; p < kMaxPosition; p += 997) {
      max.Add(RotaryAngle(inv_freq, static_cast<float>(p)));
    }
    max.Add(RotaryAngle(inv_freq, static_cast<float>(kMaxPosition - 1)));
  }
  EXPECT_LE(max.value, kTolerance) << "at angle " << max.angle;
}

TEST(Float32SinCosTest, EdgeAngles) {
  MaxError max;
  for (int k = 0; k < 64; ++k) {  // around multiples of pi/4, where the quadrant changes
    const float center = static_cast<float>(k * M_PI / 4);
    for (int step = -64; step <= 64; ++step) max.Add(std::nextafter(center, 0.0f) + step * 1e-7f);
  }
  max.Add(0.0f);
  max.Add(std::nextafter(16777216.0f, 0.0f));
  EXPECT_LE(max.value, kTolerance) << "at angle " << max.angle;
}

TEST(Float32SinCosTest, ExactValues) {
  const CosSin zero = Float32CosSin(0.0f);
  EXPECT_EQ(zero.cos, 1.0f);
  EXPECT_EQ(zero.sin, 0.0f);
  // AngleCosSin dispatches on the math and scales both.
  const CosSin scaled = AngleCosSin(0.0f, 0.5f, SinCosMath::kFloat32);
  EXPECT_EQ(scaled.cos, 0.5f);
  EXPECT_EQ(scaled.sin, 0.0f);
}

}  // namespace
}  // namespace mrope
