// The model of a golden case (mrope/service/case_model.h): the preset of its `model` key with
// the flat `config` values, the family's token keys included; errors name the key.

#include "mrope/service/case_model.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "mrope/model/model_family.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;

google::protobuf::Value Json(const std::string& text) {
  auto value = ParseJson(text);
  EXPECT_TRUE(value.ok()) << value.status();
  return value.ok() ? *value : google::protobuf::Value();
}

TEST(CaseModelTest, PresetWithTheCaseConfig) {
  auto spec = ModelSpecFromCase(Json(R"({"model": "glm4v_moe", "config": {
      "image_token_id": 7, "image_start_token_id": 8, "spatial_merge_size": 4,
      "vision_start_token_id": 9, "rope_theta": 10000.0}})"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "glm4v_moe");
  EXPECT_EQ(FamilyOf(spec->positions).family, ModelFamily::kGlm4vMoe);
  EXPECT_EQ(spec->positions.tokens.image, 7);
  EXPECT_EQ(spec->positions.tokens.vision_start, 8);  // GLM's image_start; vision_start unread
  EXPECT_EQ(spec->positions.tokens.video, 151364);    // the preset's
  EXPECT_EQ(spec->positions.spatial_merge_size, 4);
  EXPECT_TRUE(spec->rope.has_value());

  auto hf = ModelConfigFromFlatJson(
      "qwen2_5_vl", Json(R"({"video_time_rounding": "truncate_interval_first"})"));
  ASSERT_TRUE(hf.ok()) << hf.status();
  EXPECT_EQ(hf->video_time_rounding, VideoTimeRounding::kTruncateIntervalFirst);
}

TEST(CaseModelTest, ErrorsNameTheKey) {
  EXPECT_THAT(std::string(ModelSpecFromCase(Json(R"({"config": {}})")).status().message()),
              HasSubstr("model"));
  EXPECT_THAT(std::string(ModelSpecFromCase(Json(R"({"model": "llava"})")).status().message()),
              HasSubstr("unknown preset 'llava'"));
  EXPECT_THAT(std::string(ModelConfigFromFlatJson("qwen2_vl", Json(R"({"spatial_merge_size": 0})"))
                              .status()
                              .message()),
              HasSubstr("config.spatial_merge_size must be in [1, 64], got 0"));
  EXPECT_THAT(std::string(ModelConfigFromFlatJson("glm4v", Json(R"({"video_end_token_id": "x"})"))
                              .status()
                              .message()),
              HasSubstr("config.video_end_token_id"));
  EXPECT_THAT(std::string(ModelConfigFromFlatJson(
                              "qwen2_5_vl", Json(R"({"video_time_rounding": "round"})"))
                              .status()
                              .message()),
              HasSubstr("config.video_time_rounding must be scale_then_truncate or "
                        "truncate_interval_first, got 'round'"));
}

}  // namespace
}  // namespace mrope
