// A preset with overrides (mrope/service/preset_overrides.h): every override takes effect, the
// rope ones exactly as the same values in a config.json do, or is refused naming the key.

#include "mrope/service/preset_overrides.h"

#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/positions/batch.h"
#include "mrope/service/model_spec.h"
#include "mrope/service/position_service.h"
#include "tests/testing/service_testing.h"

namespace mrope {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

struct CosSinValues {
  std::vector<float> cos;
  std::vector<float> sin;
};

// cos/sin of a prompt with an image, so that every axis (and so the sections) matters.
CosSinValues CosSinOf(const ModelSpec& spec) {
  const PositionService service = MakeService(spec);
  Prompt prompt;
  prompt.sequences = {{Span::Text(3), Span::Image({1, 8, 12}), Span::Text(4)}};
  OutputOptions options;
  options.cos_sin = true;
  auto result = service.Compute<int64_t>(prompt, options);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  return {result->cos, result->sin};
}

// LoadModelSpec of `text` written to a config.json.
ModelSpec LoadConfigJson(const std::string& text) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/config.json");
  std::ofstream(path) << text;
  auto spec = LoadModelSpec(path);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : ModelSpec();
}

// Qwen2.5-VL-7B-Instruct's config.json with the text rope keys `rope`.
std::string Qwen25VlConfig(const std::string& rope) {
  return absl::StrCat(R"({"model_type": "qwen2_5_vl", "image_token_id": 151655,
      "video_token_id": 151656, "vision_start_token_id": 151652, "vision_end_token_id": 151653,
      "vision_config": {"spatial_merge_size": 2, "tokens_per_second": 2}, )",
                      rope, "}");
}

// GLM-4.1V's config.json (rope keys in text_config) with the text config `text`.
std::string Glm4vConfig(const std::string& text) {
  return absl::StrCat(R"({"model_type": "glm4v", "image_token_id": 151343,
      "video_token_id": 151344, "image_start_token_id": 151339, "image_end_token_id": 151340,
      "video_start_token_id": 151341, "video_end_token_id": 151342,
      "vision_config": {"spatial_merge_size": 2}, "text_config": )",
                      text, "}");
}

struct RopeOverrideCase {
  std::string preset;
  std::string overrides;
  std::string config_json;  // the same values in the family's config.json
};

void PrintTo(const RopeOverrideCase& c, std::ostream* os) { *os << c.preset << " " << c.overrides; }

class RopeOverrideTest : public ::testing::TestWithParam<RopeOverrideCase> {};

TEST_P(RopeOverrideTest, GivesTheCosSinOfTheSameConfigJson) {
  const RopeOverrideCase& c = GetParam();
  auto overridden = PresetModelSpecWithOverrides(c.preset, c.overrides);
  ASSERT_TRUE(overridden.ok()) << overridden.status();
  auto preset = PresetModelSpec(c.preset);
  ASSERT_TRUE(preset.ok()) << preset.status();
  const ModelSpec config_json = LoadConfigJson(c.config_json);
  ASSERT_TRUE(config_json.rope.has_value());
  const CosSinValues got = CosSinOf(*overridden);
  const CosSinValues want = CosSinOf(config_json);
  ASSERT_FALSE(want.cos.empty());
  EXPECT_EQ(got.cos, want.cos);
  EXPECT_EQ(got.sin, want.sin);
  const CosSinValues before = CosSinOf(*preset);
  EXPECT_FALSE(got.cos == before.cos && got.sin == before.sin) << "the override changed nothing";
}

INSTANTIATE_TEST_SUITE_P(
    Keys, RopeOverrideTest,
    ::testing::Values(
        RopeOverrideCase{"qwen2_5_vl", R"({"rope_theta": 10000})",
                         Qwen25VlConfig(R"("rope_theta": 10000, "head_dim": 128,
                             "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]})")},
        RopeOverrideCase{"qwen2_5_vl", R"({"mrope_section": [8, 28, 28]})",
                         Qwen25VlConfig(R"("rope_theta": 1000000, "head_dim": 128,
                             "rope_scaling": {"type": "mrope", "mrope_section": [8, 28, 28]})")},
        RopeOverrideCase{"qwen2_5_vl",
                         R"({"mrope_interleaved": true, "mrope_section": [24, 20, 20]})",
                         Qwen25VlConfig(R"("rope_theta": 1000000, "head_dim": 128,
                             "rope_scaling": {"mrope_section": [24, 20, 20],
                                              "mrope_interleaved": true})")},
        RopeOverrideCase{"qwen2_5_vl",
                         R"({"partial_rotary_factor": 0.5, "mrope_section": [8, 12, 12]})",
                         Qwen25VlConfig(R"("rope_theta": 1000000, "head_dim": 128,
                             "partial_rotary_factor": 0.5,
                             "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]})")},
        RopeOverrideCase{"qwen2_5_vl", R"({"head_dim": 64, "mrope_section": [8, 12, 12]})",
                         Qwen25VlConfig(R"("rope_theta": 1000000, "head_dim": 64,
                             "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]})")},
        // head_dim derived as config.json derives it: hidden_size / num_attention_heads.
        RopeOverrideCase{"qwen2_5_vl",
                         R"({"hidden_size": 2048, "num_attention_heads": 32,
                             "mrope_section": [8, 12, 12]})",
                         Qwen25VlConfig(R"("rope_theta": 1000000, "hidden_size": 2048,
                             "num_attention_heads": 32,
                             "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]})")},
        // Without its own original length, yarn's is max_position_embeddings.
        RopeOverrideCase{"qwen2_5_vl",
                         R"({"max_position_embeddings": 32768, "rope_scaling": {
                             "rope_type": "yarn", "factor": 4}})",
                         Qwen25VlConfig(R"("rope_theta": 1000000, "head_dim": 128,
                             "max_position_embeddings": 32768,
                             "rope_scaling": {"rope_type": "yarn", "factor": 4,
                                              "mrope_section": [16, 24, 24]})")},
        // Dynamic NTK scales past max_position_embeddings: the prompt's 13 positions pass 8.
        RopeOverrideCase{"qwen2_5_vl",
                         R"({"max_position_embeddings": 8, "rope_scaling": {
                             "rope_type": "dynamic", "factor": 2}})",
                         Qwen25VlConfig(R"("rope_theta": 1000000, "head_dim": 128,
                             "max_position_embeddings": 8,
                             "rope_scaling": {"rope_type": "dynamic", "factor": 2,
                                              "mrope_section": [16, 24, 24]})")},
        // GLM-4.1V keeps its rope in text_config; a full rotary needs sections of 64 pairs.
        RopeOverrideCase{"glm4v",
                         R"({"partial_rotary_factor": 1.0, "mrope_section": [16, 24, 24]})",
                         Glm4vConfig(R"({"rope_theta": 10000, "head_dim": 128,
                             "partial_rotary_factor": 1.0,
                             "rope_parameters": {"rope_type": "default",
                                                 "mrope_section": [16, 24, 24]}})")}));

std::string OverrideError(const std::string& preset, const std::string& overrides) {
  auto spec = PresetModelSpecWithOverrides(preset, overrides);
  EXPECT_FALSE(spec.ok()) << overrides;
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(spec.status().message());
}

TEST(PresetOverridesTest, UnknownKeysAreRefusedListingTheKeys) {
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"bogus_key": 1})"),
              AllOf(HasSubstr("'bogus_key'"), HasSubstr("qwen2_5_vl"),
                    HasSubstr("image_token_id"), HasSubstr("tokens_per_second"),
                    HasSubstr("rope_theta"), HasSubstr("mrope_section"),
                    HasSubstr("rope_scaling")));
  // Keys the family does not read are unknown to it: Qwen2-VL has no video time scale.
  EXPECT_THAT(OverrideError("qwen2_vl", R"({"tokens_per_second": 2})"),
              AllOf(HasSubstr("'tokens_per_second'"), HasSubstr("vision_start_token_id")));
  // A golden case's provenance is not an override.
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"checkpoint": "Qwen/Qwen2.5-VL-7B-Instruct"})"),
              HasSubstr("'checkpoint'"));
}

// A key that the resulting config does not read, or whose value the built rotary embedding does
// not depend on there, is refused: it would look applied and change nothing.
TEST(PresetOverridesTest, IneffectiveKeysAreRefusedListingTheKeys) {
  // The default rope type reads no max_position_embeddings.
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"max_position_embeddings": 128000})"),
              AllOf(HasSubstr("overrides.max_position_embeddings: has no effect on qwen2_5_vl ("),
                    HasSubstr("rope_type 'default'"),
                    HasSubstr("; its keys are image_token_id, video_token_id"),
                    HasSubstr("rope_scaling")));
  // head_dim comes before hidden_size / num_attention_heads.
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"head_dim": 64, "hidden_size": 2048,
                                              "mrope_section": [8, 12, 12]})"),
              AllOf(HasSubstr("overrides.hidden_size: has no effect on qwen2_5_vl (head_dim"),
                    HasSubstr("its keys are")));
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"num_attention_heads": 16, "head_dim": 128})"),
              HasSubstr("overrides.num_attention_heads: has no effect"));
  // yarn takes its original length from rope_scaling; the top-level one is LongRoPE's.
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"max_position_embeddings": 128000,
                                              "rope_scaling": {"rope_type": "yarn", "factor": 4,
                                                  "original_max_position_embeddings": 32768}})"),
              HasSubstr("overrides.max_position_embeddings: has no effect"));
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"original_max_position_embeddings": 32768,
                                              "max_position_embeddings": 128000,
                                              "rope_scaling": {"rope_type": "yarn",
                                                               "factor": 4}})"),
              HasSubstr("overrides.original_max_position_embeddings: has no effect"));
  // A rope_scaling that restates the default, or a section the rope object's one hides.
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"rope_scaling": {"rope_type": "default"}})"),
              HasSubstr("overrides.rope_scaling: has no effect"));
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"mrope_section": [8, 28, 28], "rope_scaling": {
                                              "mrope_section": [16, 24, 24]}})"),
              HasSubstr("overrides.mrope_section: has no effect"));
}

TEST(PresetOverridesTest, BadDocumentsAndValuesAreRefusedNamingTheKey) {
  EXPECT_THAT(OverrideError("qwen2_5_vl", "[1,2]"), HasSubstr("expected a JSON object"));
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"rope_theta": -1})"),
              AllOf(HasSubstr("rope_theta"), HasSubstr("-1")));
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"rope_theta": "big"})"), HasSubstr("rope_theta"));
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"rope_theta": null})"), HasSubstr("rope_theta"));
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"mrope_section": [16, 24, 25]})"),
              AllOf(HasSubstr("mrope_section [16, 24, 25]"), HasSubstr("sums to 65")));
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"mrope_section": "16,24,24"})"),
              HasSubstr("mrope_section"));
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"head_dim": 64})"),  // sections of 64 pairs left
              HasSubstr("sums to 64, expected rotary_dim / 2 = 32"));
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"partial_rotary_factor": 2})"),
              AllOf(HasSubstr("partial_rotary_factor"), HasSubstr("2")));
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"rope_scaling": {"rope_type": "yarn"}})"),
              HasSubstr("rope_scaling.factor is required"));
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"rope_scaling": 4})"),
              HasSubstr("rope_scaling: expected an object"));
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"spatial_merge_size": "x"})"),
              HasSubstr("spatial_merge_size"));
  EXPECT_THAT(OverrideError("qwen2_vl", R"({"spatial_merge_size": 0})"),
              HasSubstr("spatial_merge_size must be in [1, 64], got 0"));
  EXPECT_THAT(OverrideError("qwen2_5_vl", R"({"video_time_rounding": "round"})"),
              HasSubstr("video_time_rounding must be scale_then_truncate or "
                        "truncate_interval_first, got 'round'"));
  // Qwen3.5's rotary code interleaves whatever config.json says: a contrary value would not
  // take effect.
  EXPECT_THAT(OverrideError("qwen3_5", R"({"mrope_interleaved": false})"),
              HasSubstr("mrope_interleaved"));
}

TEST(PresetOverridesTest, PositionKeysTakeEffect) {
  auto spec = PresetModelSpecWithOverrides(
      "qwen2_5_vl", R"({"video_time_rounding": "truncate_interval_first",
                        "spatial_merge_size": 4, "image_token_id": 7})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->positions.video_time_rounding, VideoTimeRounding::kTruncateIntervalFirst);
  EXPECT_EQ(spec->positions.spatial_merge_size, 4);
  EXPECT_EQ(spec->positions.tokens.image, 7);
  // The preset's own values are accepted again: a no-op misleads nobody.
  auto same = PresetModelSpecWithOverrides("qwen3_5", R"({"mrope_interleaved": true})");
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->rope->mrope_layout, MropeLayout::kInterleaved);
  auto same_rope = PresetModelSpecWithOverrides(
      "qwen2_5_vl", R"({"rope_theta": 1000000, "head_dim": 128, "mrope_section": [16, 24, 24],
                        "spatial_merge_size": 2})");
  ASSERT_TRUE(same_rope.ok()) << same_rope.status();
}

// HunYuan-VL: mrope_section sets the position axes and the XD map, whose pairs' second halves
// alone may differ from the preset's ([16, 16, 16, 8, 8] keeps every first half's axis): the
// key takes effect (it was refused as ineffective when only the first halves were compared).
TEST(PresetOverridesTest, HunyuanSectionsSetTheAxes) {
  auto five = PresetModelSpecWithOverrides("hunyuan_vl", R"({"mrope_section": [16, 16, 16, 8, 8]})");
  ASSERT_TRUE(five.ok()) << five.status();
  EXPECT_EQ(five->positions.num_axes, 5);
  EXPECT_EQ(five->rope->mrope_section.size(), 5u);
  auto nine = PresetModelSpecWithOverrides(
      "hunyuan_vl", R"({"mrope_section": [8, 8, 8, 8, 8, 8, 8, 4, 4]})");
  EXPECT_THAT(std::string(nine.status().message()),
              HasSubstr("must have 1 to 8 entries (one per axis)"));
}

// The position keys a family reads, each of which PresetModelSpecWithOverrides takes.
TEST(PresetOverridesTest, PositionKeysAreTheFamilysOwn) {
  auto qwen2_5 = PresetPositionKeys("qwen2_5_vl");
  ASSERT_TRUE(qwen2_5.ok()) << qwen2_5.status();
  EXPECT_THAT(*qwen2_5, testing::UnorderedElementsAre(
                            "image_token_id", "video_token_id", "vision_start_token_id",
                            "vision_end_token_id", "spatial_merge_size", "tokens_per_second",
                            "video_time_rounding"));
  auto omni = PresetPositionKeys("qwen2_5_omni");
  ASSERT_TRUE(omni.ok()) << omni.status();
  EXPECT_THAT(*omni, testing::IsSupersetOf({"audio_token_id", "position_id_per_seconds",
                                            "seconds_per_chunk"}));
  EXPECT_THAT(*omni, testing::Not(testing::Contains("tokens_per_second")));
  EXPECT_FALSE(PresetPositionKeys("no_such_preset").ok());
}

TEST(PresetOverridesTest, MaxPositionEmbeddingsIsDynamicNtksReferenceLength) {
  auto spec = PresetModelSpecWithOverrides(
      "qwen2_5_vl", R"({"max_position_embeddings": 4096,
                        "rope_scaling": {"rope_type": "dynamic", "factor": 2}})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->rope->scaling.type, RopeType::kDynamic);
  EXPECT_EQ(spec->rope->scaling.original_max_position_embeddings, 4096);
}

}  // namespace
}  // namespace mrope
