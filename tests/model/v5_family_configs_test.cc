// The families new in transformers 5.x load from their config.json, nested as the hub files are
// (examples/configs/v5_defaults: the configuration classes' defaults, v5.2.0's; Qwen4-Exp's
// 5.23.0's with the checkpoint's partial rotary), into their row's preset: ids, merge sizes,
// reference convention and rotary values.

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "mrope/model/model_family.h"
#include "mrope/service/model_spec.h"

namespace mrope {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr char kDir[] = "examples/configs/v5_defaults/";

void ExpectPreset(const ModelSpec& spec, absl::string_view preset_name) {
  SCOPED_TRACE(std::string(preset_name));
  const ModelSpec preset = PresetModelSpec(preset_name).value();
  const ModelConfig& got = spec.positions;
  const ModelConfig& want = preset.positions;
  EXPECT_EQ(got.rules, want.rules);
  for (const TokenKey& key : want.rules->token_keys) {
    EXPECT_EQ(got.tokens.*key.field, want.tokens.*key.field) << key.hf_name;
  }
  EXPECT_EQ(got.spatial_merge_size, want.spatial_merge_size);
  EXPECT_EQ(got.temporal_merge_size, want.temporal_merge_size);
  EXPECT_EQ(got.convention, want.convention);
  EXPECT_EQ(got.num_axes, want.num_axes);
  ASSERT_TRUE(spec.rope.has_value() && preset.rope.has_value());
  EXPECT_EQ(spec.rope->head_dim, preset.rope->head_dim);
  EXPECT_EQ(spec.rope->scaling.rotary_dim, preset.rope->scaling.rotary_dim);
  EXPECT_EQ(spec.rope->scaling.theta, preset.rope->scaling.theta);
  EXPECT_THAT(spec.rope->mrope_section, ElementsAreArray(preset.rope->mrope_section));
  EXPECT_EQ(spec.rope->mrope_layout, preset.rope->mrope_layout);
  EXPECT_EQ(RotaryLayoutOf(spec), RotaryLayoutOf(preset));
}

TEST(V5FamilyConfigsTest, EveryNewFamilyLoadsIntoItsPreset) {
  std::vector<std::string> loaded;
  for (const ModelFamilyInfo& row : ModelFamilies()) {
    if (row.preset.convention == Convention::kHfV4) continue;
    const std::string path = absl::StrCat(kDir, row.name, ".json");
    auto spec = LoadModelSpec(path);
    ASSERT_TRUE(spec.ok()) << spec.status();
    ExpectPreset(*spec, row.name);
    loaded.emplace_back(row.name);
  }
  EXPECT_THAT(loaded, ElementsAre("qwen3_5", "qwen3_5_moe", "glm46v", "glm_ocr", "paddleocr_vl",
                                  "ernie4_5_vl_moe", "glm_image", "qwen4_exp", "cosmos3_omni",
                                  "cosmos3_edge", "hunyuan_vl"));
}

// HunyuanOCR's rope_scaling: type "xdrope" with alpha is static NTK, base theta *
// alpha^(head_dim / (head_dim - 2)) in Python floats (compute_ntk_alpha_rope_parameters); its
// factor is then unread. Without alpha it is the dynamic type, which needs its factor.
TEST(V5FamilyConfigsTest, HunyuanNtkAlpha) {
  auto doc = ReadJsonFile(absl::StrCat(kDir, "hunyuan_vl.json")).value();
  auto& rope = *(*doc.mutable_struct_value()->mutable_fields())["rope_scaling"]
                    .mutable_struct_value()
                    ->mutable_fields();
  rope["type"].set_string_value("xdrope");
  rope["alpha"].set_number_value(1000);
  auto spec = ModelSpecFromHfConfig(doc);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->rope->scaling.type, RopeType::kDefault);
  EXPECT_EQ(spec->rope->scaling.theta, 1e4 * std::pow(1000.0, 128.0 / 126.0));
  EXPECT_EQ(spec->rope->mrope_layout, MropeLayout::kXd);
  EXPECT_THAT(spec->rope->mrope_section, ElementsAre(16, 16, 16, 16));
  rope.erase("alpha");
  EXPECT_THAT(std::string(ModelSpecFromHfConfig(doc).status().message()),
              HasSubstr("rope_scaling.factor is required for rope_type 'dynamic'"));
  rope["alpha"].set_number_value(-2);
  EXPECT_THAT(std::string(ModelSpecFromHfConfig(doc).status().message()),
              HasSubstr("rope_scaling.alpha must be finite and > 0, got -2"));
}

// HunYuan-VL's axes are its sections' count: HunyuanOCR's flat config.json keeps them in
// rope_scaling.xdrope_section, transformers 5.x's nested one in text_config.rope_parameters.
TEST(V5FamilyConfigsTest, HunyuanAxesFromSections) {
  auto doc = ReadJsonFile(absl::StrCat(kDir, "hunyuan_vl.json")).value();
  auto& fields = *doc.mutable_struct_value()->mutable_fields();
  EXPECT_EQ(ModelSpecFromHfConfig(doc).value().positions.num_axes, 4);
  fields.erase("rope_scaling");
  EXPECT_THAT(std::string(ModelSpecFromHfConfig(doc).status().message()),
              HasSubstr("missing required field 'rope_scaling.xdrope_section' (or "
                        "[text_config.]rope_parameters.mrope_section) for hunyuan_vl"));
  const auto nested = [&](std::vector<int> sections) {
    auto text = ParseJson(absl::StrCat(
                              "{\"head_dim\": 128, \"rope_parameters\": {\"rope_type\": "
                              "\"default\", \"rope_theta\": 10000.0, \"mrope_section\": [",
                              absl::StrJoin(sections, ", "), "]}}"))
                    .value();
    fields["text_config"] = text;
    return ModelSpecFromHfConfig(doc);
  };
  auto five = nested({16, 16, 16, 8, 8});
  ASSERT_TRUE(five.ok()) << five.status();
  EXPECT_EQ(five->positions.num_axes, 5);
  EXPECT_THAT(five->rope->mrope_section, ElementsAre(16, 16, 16, 8, 8));
  EXPECT_THAT(std::string(nested({8, 8, 8, 8, 8, 8, 8, 4, 4}).status().message()),
              HasSubstr("num_axes (the length of mrope_section) must be in [3, 8] for "
                        "hunyuan_vl, got 9"));
}

// Where the class has no mrope_section the rotary code's default applies, and Qwen3.5
// interleaves whatever config.json says; PaddleOCR-VL's attention needs the section.
TEST(V5FamilyConfigsTest, RotaryCodeDefaults) {
  auto doc = ReadJsonFile(absl::StrCat(kDir, "qwen3_5.json")).value();
  auto& rope = *(*(*doc.mutable_struct_value()->mutable_fields())["text_config"]
                      .mutable_struct_value()
                      ->mutable_fields())["rope_parameters"]
                    .mutable_struct_value()
                    ->mutable_fields();
  rope.erase("mrope_section");
  rope["mrope_interleaved"].set_bool_value(false);
  auto spec = ModelSpecFromHfConfig(doc);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->rope->mrope_section, ElementsAre(11, 11, 10));
  EXPECT_EQ(spec->rope->mrope_layout, MropeLayout::kInterleaved);

  auto paddle = ReadJsonFile(absl::StrCat(kDir, "paddleocr_vl.json")).value();
  paddle.mutable_struct_value()->mutable_fields()->erase("rope_scaling");
  EXPECT_THAT(std::string(ModelSpecFromHfConfig(paddle).status().message()),
              HasSubstr("missing required field 'rope_scaling.mrope_section' (or "
                        "rope_parameters.mrope_section) for paddleocr_vl"));
}

// Qwen4-Exp's rotary code reads partial_rotary_factor with a default of 1.0 (its class sets none,
// unlike Qwen3.5's 0.25) and interleaves [11, 11, 10] whatever config.json says.
TEST(V5FamilyConfigsTest, Qwen4ExpRotaryDefaults) {
  auto doc = ReadJsonFile(absl::StrCat(kDir, "qwen4_exp.json")).value();
  auto& rope = *(*(*doc.mutable_struct_value()->mutable_fields())["text_config"]
                      .mutable_struct_value()
                      ->mutable_fields())["rope_parameters"]
                    .mutable_struct_value()
                    ->mutable_fields();
  EXPECT_EQ(ModelSpecFromHfConfig(doc).value().rope->scaling.rotary_dim, 64);
  rope.erase("partial_rotary_factor");
  rope.erase("mrope_section");
  rope.erase("mrope_interleaved");
  auto spec = ModelSpecFromHfConfig(doc);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->rope->scaling.rotary_dim, 256);
  EXPECT_THAT(spec->rope->mrope_section, ElementsAre(11, 11, 10));
  EXPECT_EQ(spec->rope->mrope_layout, MropeLayout::kInterleaved);
  EXPECT_EQ(spec->positions.convention, Convention::kHfV5);
}

// ERNIE's temporal merge comes from vision_config.temporal_merge_size.
TEST(V5FamilyConfigsTest, ErnieTemporalMerge) {
  auto doc = ReadJsonFile(absl::StrCat(kDir, "ernie4_5_vl_moe.json")).value();
  auto& vision = *(*doc.mutable_struct_value()->mutable_fields())["vision_config"]
                      .mutable_struct_value()
                      ->mutable_fields();
  vision["temporal_merge_size"].set_number_value(4);
  EXPECT_EQ(ModelSpecFromHfConfig(doc).value().positions.temporal_merge_size, 4);
  vision["temporal_merge_size"].set_number_value(1.5);
  EXPECT_THAT(std::string(ModelSpecFromHfConfig(doc).status().message()),
              HasSubstr("vision_config.temporal_merge_size must be an integer in [1, 64], "
                        "got 1.5"));
}

}  // namespace
}  // namespace mrope
