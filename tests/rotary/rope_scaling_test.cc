// The frequency formulas of rope_scaling.h / torch_powf.h against values computed independently
// in double precision from each method's definition.

#include "mrope/rotary/rope_scaling.h"

#include <cmath>
#include <cstdint>
#include <random>

#include "gtest/gtest.h"
#include "mrope/rotary/rope_math.h"
#include "tests/testing/rotary_testing.h"
#include "mrope/rotary/torch_powf.h"

namespace mrope {
namespace {

using ::mrope::testing::UlpDistance;

constexpr int kDim = 128;
constexpr int kPairs = kDim / 2;

// theta^(-2j/d) in double (d = 128 keeps the float32 exponent 2j/d exact).
double ExactInvFreq(double theta, int j, int d = kDim) { return std::pow(theta, -2.0 * j / d); }

// Relative distance in units of float32 epsilon (2^-23).
double RelativeEps(float got, double want) {
  return std::fabs(got - want) / std::fabs(want) / 1.1920928955078125e-7;
}

RopeScaling Scaling(RopeType type, double theta = 10000.0) {
  RopeScaling s;
  s.type = type;
  s.rotary_dim = kDim;
  s.theta = theta;
  return s;
}

TEST(TorchPowfTest, WithinOneUlpOfCorrectlyRounded) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> base(1.001f, 1e7f);
  std::uniform_real_distribution<float> exponent(0.0f, 1.0f);
  for (int i = 0; i < 200000; ++i) {
    const float x = base(rng), y = exponent(rng);
    const float want = static_cast<float>(std::pow(double{x}, double{y}));
    ASSERT_LE(UlpDistance(TorchPowf(x, y), want), 1) << x << "^" << y;
  }
  EXPECT_EQ(TorchPowf(5e6f, 0.0f), 1.0f);
  EXPECT_EQ(TorchPowf(1.0f, 0.3f), 1.0f);
  EXPECT_EQ(TorchPowf(4.0f, 0.5f), 2.0f);
}

TEST(TorchPowfTest, ReproducesTorchWhereItIsNotCorrectlyRounded) {
  // HF's stored inv_freq (tests/golden/rotary_qwen2_vl, theta 1e6, d 128, pair 37) is 0x39b229fb;
  // float32(1 / correctly_rounded(1e6^(74/128))) is one ulp below it.
  EXPECT_EQ(BaseInvFreq(1e6, 37, 128), 0.00033982084f);
  EXPECT_EQ(UlpDistance(BaseInvFreq(1e6, 37, 128),
                        1.0f / static_cast<float>(std::pow(1e6, 74.0 / 128.0))),
            1);
  EXPECT_EQ(BaseInvFreq(5e6, 19, 128), 0.010262267f);  // rotary_qwen3_vl, pair 19
}

TEST(RopeScalingTest, DefaultIsThetaToTheMinusTwoJOverD) {
  for (int j = 0; j < kPairs; ++j) {
    const float got = ScaledInvFreq(Scaling(RopeType::kDefault), j, 0, 1.0f);
    EXPECT_LE(UlpDistance(got, static_cast<float>(ExactInvFreq(10000.0, j))), 2) << j;
  }
  EXPECT_EQ(ScaledInvFreq(Scaling(RopeType::kDefault), 0, 0, 1.0f), 1.0f);
}

TEST(RopeScalingTest, ExponentIsRoundedToFloat32LikeTorch) {
  // d = 96: 2j/96 is not exact in float32; torch rounds it first.
  EXPECT_EQ(RopeExponent(5, 96), static_cast<float>(10.0f / 96.0f));
  EXPECT_LE(RelativeEps(BaseInvFreq(10000.0, 5, 96), ExactInvFreq(10000.0, 5, 96)), 8.0);
}

TEST(RopeScalingTest, LinearDividesByFactor) {
  RopeScaling s = Scaling(RopeType::kLinear);
  s.factor = 4.0;
  for (int j = 0; j < kPairs; ++j) {
    const float got = ScaledInvFreq(s, j, 0, 1.0f);
    EXPECT_EQ(got, BaseInvFreq(10000.0, j, kDim) / 4.0f);
    EXPECT_LE(RelativeEps(got, ExactInvFreq(10000.0, j) / 4.0), 2.0) << j;
  }
}

TEST(RopeScalingTest, NtkScalesLowestFrequencyByFactorAndKeepsHighest) {
  RopeScaling s = Scaling(RopeType::kNtk);
  s.factor = 4.0;
  // Highest frequency (j = 0) unchanged, lowest (j = d/2 - 1) = theta^(-(d-2)/d) / s.
  EXPECT_EQ(ScaledInvFreq(s, 0, 0, 1.0f), 1.0f);
  const double lowest = std::pow(10000.0, -126.0 / 128.0) / 4.0;
  EXPECT_LE(RelativeEps(ScaledInvFreq(s, kPairs - 1, 0, 1.0f), lowest), 4.0);
  const double base = 10000.0 * std::pow(4.0, 128.0 / 126.0);
  for (int j = 0; j < kPairs; ++j) {
    EXPECT_LE(RelativeEps(ScaledInvFreq(s, j, 0, 1.0f), ExactInvFreq(base, j)), 4.0) << j;
  }
}

TEST(RopeScalingTest, DynamicRescalesOnlyBeyondOriginalLength) {
  RopeScaling s = Scaling(RopeType::kDynamic);
  s.factor = 4.0;
  s.original_max_position_embeddings = 4096;
  for (int j = 0; j < kPairs; ++j) {
    EXPECT_EQ(ScaledInvFreq(s, j, 100, 1.0f), BaseInvFreq(10000.0, j, kDim));
    EXPECT_EQ(ScaledInvFreq(s, j, 4096, 1.0f), BaseInvFreq(10000.0, j, kDim));
  }
  // L = 2 * L0: effective factor 4 * 2 - 3 = 5.
  const double base = 10000.0 * std::pow(5.0, 128.0 / 126.0);
  for (int j = 0; j < kPairs; ++j) {
    EXPECT_LE(RelativeEps(ScaledInvFreq(s, j, 8192, 1.0f), ExactInvFreq(base, j)), 4.0) << j;
  }
  EXPECT_LT(ScaledInvFreq(s, kPairs - 1, 4097, 1.0f), BaseInvFreq(10000.0, kPairs - 1, kDim));
}

// HF v4.57.6 recomputes the base with the sequence length as a torch tensor, so in float32:
// s*L/L0 - (s-1) = 1.00048828125 exactly, then float32(1e6 * float32(pow(it, 128/126))) =
// 1000496.0. The same formula in double rounds to 1000496.0625 (this happens for about a
// quarter of the lengths).
TEST(RopeScalingTest, DynamicBaseTakesHfFloat32Steps) {
  EXPECT_EQ(DynamicNtkTheta(1e6, 2.0, 4097, 4096, 128), 1000496.0);
}

RopeScaling Yarn() {
  RopeScaling s = Scaling(RopeType::kYarn);
  s.factor = 4.0;
  s.original_max_position_embeddings = 4096;
  return s;
}

TEST(RopeScalingTest, YarnCorrectionRange) {
  // dim(beta) = 128 * ln(4096 / (beta * 2 pi)) / (2 ln 10000): 20.944... for beta 32 and
  // 45.026... for beta 1; truncated to [20, 46].
  RopeScaling s = Yarn();
  YarnRange range = YarnCorrectionRange(s);
  EXPECT_EQ(range.low, 20.0);
  EXPECT_EQ(range.high, 46.0);
  s.truncate = false;
  range = YarnCorrectionRange(s);
  EXPECT_NEAR(range.low, 20.94448162063605, 1e-12);
  EXPECT_NEAR(range.high, 45.02688127375455, 1e-12);
  // Clamped to [0, d - 1].
  s.original_max_position_embeddings = 4;
  EXPECT_EQ(YarnCorrectionRange(s).low, 0.0);
}

TEST(RopeScalingTest, YarnRampEndpointsAndMiddle) {
  const RopeScaling s = Yarn();
  for (int j = 0; j < kPairs; ++j) {
    const float got = ScaledInvFreq(s, j, 0, 1.0f);
    const double extrapolation = ExactInvFreq(10000.0, j);
    if (j <= 20) {
      EXPECT_EQ(got, BaseInvFreq(10000.0, j, kDim)) << j;  // pure extrapolation
    } else if (j >= 46) {
      EXPECT_LE(RelativeEps(got, extrapolation / 4.0), 2.0) << j;  // pure interpolation
    } else {
      const double r = (j - 20.0) / 26.0;
      EXPECT_LE(RelativeEps(got, (1.0 - r) * extrapolation + r * extrapolation / 4.0), 8.0) << j;
    }
  }
}

TEST(RopeScalingTest, YarnAttentionFactor) {
  EXPECT_DOUBLE_EQ(YarnAttentionFactor(4.0, 0.0, 0.0), 1.138629436111989);  // 0.1 ln 4 + 1
  EXPECT_DOUBLE_EQ(YarnAttentionFactor(4.0, 1.0, 0.0), 1.138629436111989);
  EXPECT_DOUBLE_EQ(YarnAttentionFactor(40.0, 0.707, 0.707), 1.0);  // DeepSeek-V3 style
  EXPECT_DOUBLE_EQ(YarnAttentionFactor(40.0, 1.0, 0.5),
                   (0.1 * std::log(40.0) + 1.0) / (0.05 * std::log(40.0) + 1.0));
  EXPECT_DOUBLE_EQ(YarnAttentionFactor(1.0, 0.0, 0.0), 1.0);
}

TEST(RopeScalingTest, Llama3Bands) {
  RopeScaling s = Scaling(RopeType::kLlama3, 500000.0);
  s.factor = 8.0;
  s.low_freq_factor = 1.0;
  s.high_freq_factor = 4.0;
  s.original_max_position_embeddings = 8192;
  int high = 0, low = 0, medium = 0;
  for (int j = 0; j < kPairs; ++j) {
    const float got = ScaledInvFreq(s, j, 0, 1.0f);
    const double inv = ExactInvFreq(500000.0, j);
    const double wavelen = 2.0 * kPi / inv;
    if (wavelen < 8192.0 / 4.0) {  // high frequencies: unchanged
      EXPECT_EQ(got, BaseInvFreq(500000.0, j, kDim)) << j;
      ++high;
    } else if (wavelen > 8192.0 / 1.0) {  // low frequencies: divided by the factor
      EXPECT_EQ(got, BaseInvFreq(500000.0, j, kDim) / 8.0f) << j;
      ++low;
    } else {
      const double smooth = (8192.0 / wavelen - 1.0) / (4.0 - 1.0);
      EXPECT_LE(RelativeEps(got, (1.0 - smooth) * inv / 8.0 + smooth * inv), 8.0) << j;
      ++medium;
    }
  }
  EXPECT_GT(high, 0);
  EXPECT_GT(low, 0);
  EXPECT_GT(medium, 0);
}

TEST(RopeScalingTest, LongRopeDividesByPerPairFactor) {
  const RopeScaling s = Scaling(RopeType::kLongRope);
  for (int j = 0; j < kPairs; ++j) {
    const float ext = 1.0f + 0.25f * j;
    EXPECT_LE(RelativeEps(ScaledInvFreq(s, j, 0, ext), ExactInvFreq(10000.0, j) / ext), 3.0);
  }
  EXPECT_TRUE(LongRopeUsesLongFactor(4097, 4096));
  EXPECT_FALSE(LongRopeUsesLongFactor(4096, 4096));
}

TEST(RopeScalingTest, LongRopeAttentionFactor) {
  // sqrt(1 + ln 32 / ln 4096) = sqrt(1 + 5/12).
  EXPECT_DOUBLE_EQ(LongRopeAttentionFactor(32.0, 4096), 1.1902380714238083);
  EXPECT_DOUBLE_EQ(LongRopeAttentionFactor(1.0, 4096), 1.0);
}

}  // namespace
}  // namespace mrope
