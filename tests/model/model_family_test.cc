// The family table (mrope/model/model_family.h): rows are in ModelFamily order (FamilyInfo
// indexes by it), names are unique, and every row's preset and variants are valid configs.

#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/model/model_family.h"
#include "mrope/rotary/hf_cos_sin.h"

namespace mrope {
namespace {

TEST(ModelFamilyTable, RowsFollowTheEnumAndPresetsValidate) {
  std::set<std::string> names;
  for (size_t i = 0; i < ModelFamilies().size(); ++i) {
    const ModelFamilyInfo& row = ModelFamilies()[i];
    SCOPED_TRACE(std::string(row.name));
    EXPECT_EQ(static_cast<size_t>(row.family), i);
    EXPECT_EQ(&FamilyInfo(row.family), &row);
    EXPECT_EQ(row.preset.rules, &row.rules);
    EXPECT_EQ(&FamilyOf(row.preset), &row);
    EXPECT_EQ(row.rules.name, row.name);
    EXPECT_FALSE(row.hf_model_types.empty());
    EXPECT_TRUE(ValidateModelConfig(row.preset).ok()) << ValidateModelConfig(row.preset);
    EXPECT_EQ(ModelFamilyName(row.family), row.name);
    auto parsed = ParseModelFamily(row.name);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, row.family);
    EXPECT_TRUE(names.insert(std::string(row.name)).second);
    for (const PresetVariant& variant : row.variants) {
      EXPECT_TRUE(names.insert(std::string(variant.name)).second);
      auto config = PresetConfig(variant.name);
      ASSERT_TRUE(config.ok()) << config.status();
      EXPECT_TRUE(ValidateModelConfig(*config).ok());
    }
  }
  EXPECT_EQ(ModelFamilies().size(), 22u);
}

// A row's policy is what the planner uses, with the config's convention and rounding applied.
TEST(ModelFamilyTable, PolicyForAppliesConventionAndRounding) {
  auto hf = PresetConfig("qwen2_5_vl_hf");
  auto vllm = PresetConfig("qwen2_5_vl_vllm");
  ASSERT_TRUE(hf.ok() && vllm.ok());
  EXPECT_EQ(PolicyFor(*hf).video_time, TimeIndex::kTruncateIntervalFirst);
  EXPECT_EQ(PolicyFor(*hf).image_time, TimeIndex::kZero);
  EXPECT_EQ(PolicyFor(*vllm).video_time, TimeIndex::kScaleThenTruncate);
  EXPECT_EQ(PolicyFor(*vllm).image_time, TimeIndex::kFrame);
  auto glm = PresetConfig("glm4v");
  ASSERT_TRUE(glm.ok());
  EXPECT_EQ(PolicyFor(*glm).video_marking, VideoMarking::kImageTokensInVideoBrackets);
  EXPECT_TRUE(PolicyFor(*glm).video_frames_as_blocks);
  glm->convention = Convention::kVllm;
  EXPECT_THAT(std::string(ValidateModelConfig(*glm).message()),
              ::testing::HasSubstr("the vllm convention is not implemented for glm4v"));
}

// A convention is one value whose rules the policy takes, with the family's 5.x code where the
// convention follows it.
TEST(ModelFamilyTable, ConventionsAreData) {
  const PositionPolicy qwen2 = PolicyFor(PresetConfig("qwen2_vl_hf_v5_2").value());
  EXPECT_EQ(qwen2.pad_value, 0);
  EXPECT_TRUE(qwen2.clamp_delta);
  EXPECT_EQ(qwen2.decode, DecodeRule::kPerAxisFromLast);
  EXPECT_EQ(qwen2.text_only, TextOnlyBatch::kGenerateCumsum);
  const PositionPolicy glm = PolicyFor(PresetConfig("glm4v_hf_v5_2").value());
  EXPECT_EQ(glm.pad_value, 1);  // Glm4vModel.get_rope_index still pads with ones
  EXPECT_FALSE(glm.clamp_delta);
  // The Omni thinkers keep v4.57.6's get_rope_index in 5.x: v5.2.0 (to 5.15.1) is v4.57.6 for
  // them; from 5.16.0 (hf_v5) generate() decodes each axis from its last value.
  for (const char* name : {"qwen2_5_omni_hf_v5_2", "qwen3_omni_hf_v5_2"}) {
    const PositionPolicy omni = PolicyFor(PresetConfig(name).value());
    EXPECT_EQ(omni.decode, DecodeRule::kCachePlusDelta) << name;
    EXPECT_EQ(omni.text_only, TextOnlyBatch::kCumsumPadsInMax) << name;
  }
  for (const char* name : {"qwen2_5_omni_hf_v5", "qwen3_omni_hf_v5"}) {
    const PositionPolicy omni = PolicyFor(PresetConfig(name).value());
    EXPECT_EQ(omni.decode, DecodeRule::kPerAxisFromLast) << name;
    EXPECT_EQ(omni.text_only, TextOnlyBatch::kCumsumPadsInMax) << name;
    EXPECT_FALSE(omni.blocks_from_type_ids) << name;
    EXPECT_EQ(omni.block_end, BlockEnd::kMaxPlusOne) << name;
    EXPECT_EQ(omni.pad_value, PolicyFor(PresetConfig(name == std::string("qwen3_omni_hf_v5")
                                                         ? "qwen3_omni"
                                                         : "qwen2_5_omni")
                                            .value())
                                  .pad_value)
        << name;
  }
  const PositionPolicy v5 = PolicyFor(PresetConfig("qwen2_5_vl_hf_v5").value());
  EXPECT_TRUE(v5.blocks_from_type_ids);
  EXPECT_TRUE(v5.delta_against_unpadded);
  EXPECT_EQ(v5.block_end, BlockEnd::kStartPlusLargerSide);
  EXPECT_EQ(v5.image_time, TimeIndex::kFrame);
  EXPECT_EQ(v5.video_time, TimeIndex::kTruncateIntervalFirst);
  // GLM-Image's own block end and decode table are not a convention's to change.
  const PositionPolicy image = PolicyFor(PresetConfig("glm_image").value());
  EXPECT_EQ(image.block_end, BlockEnd::kStartPlusLargerSide);
  EXPECT_EQ(image.decode, DecodeRule::kTargetGridTable);
  for (const Convention c : AllConventions()) {
    EXPECT_EQ(ConventionRulesOf(c).convention, c);
    EXPECT_EQ(ParseConvention(ConventionName(c)).value(), c);
  }
  EXPECT_EQ(ParseConvention("hf").value(), Convention::kHfV4);
}

// The model_types of config.json find their row, whose rope says how rotary dims pair.
TEST(ModelFamilyTable, ModelTypesFindTheirRow) {
  ASSERT_NE(FamilyForModelType("qwen3_omni_moe"), nullptr);
  EXPECT_EQ(FamilyForModelType("qwen3_omni_moe")->family, ModelFamily::kQwen3Omni);
  EXPECT_EQ(FamilyForModelType("qwen3_vl_moe")->family, ModelFamily::kQwen3Vl);
  EXPECT_EQ(FamilyForModelType("glm4v")->rope.layout, RotaryLayout::kGptj);
  EXPECT_EQ(FamilyForModelType("glm4v_moe")->rope.layout, RotaryLayout::kNeox);
  EXPECT_EQ(FamilyForModelType("qwen2_vl")->rope.layout, RotaryLayout::kNeox);
  EXPECT_EQ(FamilyForModelType("llama"), nullptr);
}


// transformers 5.17.0 (PR #48105) moved the sections into the rotary module: its layout is then
// the pairing's, whatever the family returned before.
TEST(ModelFamilyTable, HfCosSinLayoutFollowsTheRelease) {
  const auto layout = [](ModelFamily family, int major, int minor) {
    return HfCosSinLayout(ModelFamilies()[static_cast<size_t>(family)], {major, minor});
  };
  EXPECT_EQ(layout(ModelFamily::kQwen2Vl, 4, 57), CosSinLayout::kPerAxis);
  EXPECT_EQ(layout(ModelFamily::kQwen2Vl, 5, 16), CosSinLayout::kPerAxis);
  EXPECT_EQ(layout(ModelFamily::kQwen2Vl, 5, 17), CosSinLayout::kCat);
  EXPECT_EQ(layout(ModelFamily::kGlm4v, 4, 57), CosSinLayout::kPerAxis);
  EXPECT_EQ(layout(ModelFamily::kGlm4v, 5, 2), CosSinLayout::kCat);
  EXPECT_EQ(layout(ModelFamily::kGlm4v, 5, 23), CosSinLayout::kRepeatInterleave);
  EXPECT_EQ(layout(ModelFamily::kGlm4vMoe, 5, 23), CosSinLayout::kCat);
  EXPECT_EQ(layout(ModelFamily::kGlmOcr, 5, 16), CosSinLayout::kCat);
  EXPECT_EQ(layout(ModelFamily::kGlmOcr, 6, 0), CosSinLayout::kRepeatInterleave);
  EXPECT_EQ(layout(ModelFamily::kErnie4_5VlMoe, 5, 2), CosSinLayout::kRepeatInterleave);
  EXPECT_EQ(layout(ModelFamily::kQwen3Vl, 4, 57), CosSinLayout::kCat);
}

TEST(ModelFamilyTable, ParseTransformersRelease) {
  const absl::StatusOr<TransformersRelease> release = ParseTransformersRelease("5.17.0.dev0");
  ASSERT_TRUE(release.ok());
  EXPECT_EQ(release->major, 5);
  EXPECT_EQ(release->minor, 17);
  EXPECT_THAT(ParseRelease("5.23.0").value(), ::testing::ElementsAre(5, 23, 0));
  EXPECT_THAT(ParseRelease("5.24.0rc1").value(), ::testing::ElementsAre(5, 24, 0));
  EXPECT_THAT(ParseRelease("5.23.0+cu130").value(), ::testing::ElementsAre(5, 23, 0));
  EXPECT_THAT(ParseRelease("0.33").value(), ::testing::ElementsAre(0, 33));
  for (const char* bad : {"5", "latest", "5.x.0", "-1.2", "", "5rc1.2"}) {
    const absl::StatusOr<TransformersRelease> parsed = ParseTransformersRelease(bad);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(parsed.status().message()),
                ::testing::HasSubstr(absl::StrCat("got '", bad, "'")));
  }
}

}  // namespace
}  // namespace mrope
