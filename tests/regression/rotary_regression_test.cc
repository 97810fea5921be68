// Regression tests for fuzzer findings in mrope/rotary (see fuzz/FUZZING.md). The crashing
// inputs are kept under tests/regression/crashers/{rope_params,config_json}_fuzzer/ and replayed
// by //fuzz:rope_params_fuzzer_replay_test and //fuzz:config_json_fuzzer_replay_test.

#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/rope_scaling.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;

RopeParameters Rope(RopeType type, double theta, double factor = 1.0) {
  RopeParameters p;
  p.head_dim = 64;
  p.scaling.type = type;
  p.scaling.rotary_dim = 64;
  p.scaling.theta = theta;
  p.scaling.factor = factor;
  p.scaling.original_max_position_embeddings = 16;
  return p;
}

// crashers/config_json_fuzzer/theta_1e75_float_cast, crashers/rope_params_fuzzer/
// theta_above_float_max: rope_theta 1e75 is a finite double, so it passed validation, but torch
// (and mrope) round the base to float32: inf, and TorchPowf(inf, e) converted NaN to int (UBSan:
// float-cast-overflow). TorchPowf already gives NaN above ~2.55e38, so bases are bounded by
// kMaxRopeBase.
TEST(RotaryRegressionTest, ThetaIsBounded) {
  EXPECT_THAT(ValidateRopeParameters(Rope(RopeType::kDefault, 1e75)).message(),
              HasSubstr("rope_theta must be a finite number > 1 and <= 1e+30, got 1e+75"));
  EXPECT_FALSE(ValidateRopeParameters(Rope(RopeType::kDefault, 3e38)).ok());
  // At the bound every inverse frequency is finite: inv_freq[0] = 1, then decreasing.
  auto inv = ComputeInvFreq(Rope(RopeType::kDefault, kMaxRopeBase), 1);
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ((*inv)[0], 1.0f);
  for (size_t j = 1; j < inv->size(); ++j) {
    EXPECT_GT((*inv)[j], 0.0f);
    EXPECT_LT((*inv)[j], (*inv)[j - 1]);
  }
}

// The same through the NTK-scaled base theta * factor^(d / (d - 2)), checked for NTK at
// validation and for dynamic NTK (whose base grows with the sequence length) per length.
TEST(RotaryRegressionTest, ScaledNtkBaseIsBounded) {
  EXPECT_THAT(ValidateRopeParameters(Rope(RopeType::kNtk, 1e20, 1e10)).message(),
              HasSubstr("exceeds 1e+30"));
  const RopeParameters dynamic = Rope(RopeType::kDynamic, 1e20, 1e8);
  ASSERT_TRUE(ValidateRopeParameters(dynamic).ok());
  EXPECT_TRUE(ComputeInvFreq(dynamic, 16).ok());  // up to L0 the base is theta
  EXPECT_THAT(ComputeInvFreq(dynamic, 1 << 20).status().message(),
              HasSubstr("at seq_len 1048576 exceeds 1e+30"));
}

// crashers/rope_params_fuzzer/linear_factor_denormal_inf: a linear factor of 5.4e-312 is a
// positive finite double but 0 as a float32, so inv_freq[0] = 1 / 0 = inf (and every cos/sin
// NaN). Validation now computes the inverse frequencies and requires them finite.
TEST(RotaryRegressionTest, InverseFrequenciesMustBeFinite) {
  const RopeParameters linear = Rope(RopeType::kLinear, 4.0, 5.43248e-312);
  EXPECT_THAT(ValidateRopeParameters(linear).message(),
              HasSubstr("gives inv_freq[0] = inf (not finite in float32)"));
  EXPECT_FALSE(ComputeInvFreq(linear, 0).ok());
  // LongRoPE: both factor lists are checked, whatever the sequence length.
  RopeParameters longrope = Rope(RopeType::kLongRope, 1e4);
  longrope.short_factor.assign(32, 1.0f);
  longrope.long_factor.assign(32, 1.0f);
  longrope.long_factor[3] = 1e-45f;
  EXPECT_THAT(ValidateRopeParameters(longrope).message(), HasSubstr("inv_freq[3] = inf"));
  longrope.long_factor[3] = 2.0f;
  auto inv = ComputeInvFreq(longrope, 17);  // past L0 = 16: the long factors
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ((*inv)[0], 1.0f);
}

}  // namespace
}  // namespace mrope
