// RopeParameters -> inv_freq / RotarySpec, and validation of hand-built parameters.

#include "mrope/rotary/rope_params.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/rotary/rope_scaling.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;

RopeParameters Default(int head_dim = 8) {
  RopeParameters p;
  p.head_dim = head_dim;
  p.scaling.rotary_dim = head_dim;
  p.scaling.theta = 10000.0;
  return p;
}

TEST(RopeParamsTest, ComputeInvFreqUsesScaledInvFreq) {
  RopeParameters p = Default();
  p.scaling.type = RopeType::kLinear;
  p.scaling.factor = 2.0;
  const absl::StatusOr<std::vector<float>> inv = ComputeInvFreq(p, 0);
  ASSERT_TRUE(inv.ok()) << inv.status();
  ASSERT_EQ(inv->size(), 4u);
  for (int j = 0; j < 4; ++j) EXPECT_EQ((*inv)[j], ScaledInvFreq(p.scaling, j, 0, 1.0f));
}

TEST(RopeParamsTest, LongRopePicksFactorsBySequenceLength) {
  RopeParameters p = Default(4);
  p.scaling.type = RopeType::kLongRope;
  p.scaling.original_max_position_embeddings = 100;
  p.short_factor = {1.0f, 2.0f};
  p.long_factor = {4.0f, 8.0f};
  const std::vector<float> short_inv = *ComputeInvFreq(p, 100);
  const std::vector<float> long_inv = *ComputeInvFreq(p, 101);
  EXPECT_EQ(short_inv[1], ScaledInvFreq(p.scaling, 1, 100, 2.0f));
  EXPECT_EQ(long_inv[1], ScaledInvFreq(p.scaling, 1, 101, 8.0f));
  EXPECT_EQ(long_inv[0], 0.25f);  // 1 / (4 * theta^0)
}

TEST(RopeParamsTest, BuildRotarySpec) {
  RopeParameters p = Default(16);
  p.scaling.rotary_dim = 12;
  p.mrope_section = {2, 2, 2};
  p.attention_scaling = 1.5f;
  const absl::StatusOr<RotarySpec> spec = BuildRotarySpec(p, RotaryLayout::kGptj, 10);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->head_dim, 16);
  EXPECT_EQ(spec->rotary_dim, 12);
  EXPECT_EQ(spec->layout, RotaryLayout::kGptj);
  EXPECT_EQ(spec->inv_freq.size(), 6u);
  EXPECT_EQ(spec->axis_map.num_pairs, 6);
  EXPECT_EQ(spec->axis_map.axis[5], kAxisW);
  EXPECT_EQ(spec->attention_scaling, 1.5f);
}

TEST(RopeParamsTest, ValidationNamesFields) {
  RopeParameters p = Default();
  p.scaling.type = RopeType::kYarn;
  p.scaling.factor = 2.0;
  p.scaling.original_max_position_embeddings = 0;
  EXPECT_THAT(ValidateRopeParameters(p, "rope_scaling.").message(),
              HasSubstr("rope_scaling.original_max_position_embeddings must be > 0, got 0"));
  p = Default();
  p.scaling.rotary_dim = 7;
  EXPECT_THAT(ComputeInvFreq(p, 0).status().message(), HasSubstr("must be even"));
  p = Default();
  EXPECT_THAT(ComputeInvFreq(p, -1).status().message(), HasSubstr("seq_len must be >= 0"));
  p.attention_scaling = 0.0f;
  EXPECT_THAT(ValidateRopeParameters(p).message(), HasSubstr("attention_factor"));
  EXPECT_FALSE(BuildRotarySpec(Default(), static_cast<RotaryLayout>(9), 0).ok());
}

TEST(RopeParamsTest, RopeTypeNames) {
  for (RopeType type : {RopeType::kDefault, RopeType::kLinear, RopeType::kNtk, RopeType::kDynamic,
                        RopeType::kYarn, RopeType::kLlama3, RopeType::kLongRope}) {
    EXPECT_EQ(*RopeTypeFromName(RopeTypeName(type)), type);
  }
  EXPECT_EQ(*RopeTypeFromName("mrope"), RopeType::kDefault);
  EXPECT_FALSE(RopeTypeFromName("su").ok());
}

}  // namespace
}  // namespace mrope
