// The model of a golden case (mrope/service/case_model.h): the preset of its `model` key with
// the flat `config` values as overrides, the provenance keys skipped; errors name the key.

#include "mrope/service/case_model.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "mrope/model/model_family.h"

namespace mrope {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

google::protobuf::Value Json(const std::string& text) {
  auto value = ParseJson(text);
  EXPECT_TRUE(value.ok()) << value.status();
  return value.ok() ? *value : google::protobuf::Value();
}

std::string CaseError(const std::string& doc) {
  auto spec = ModelSpecFromCase(Json(doc));
  EXPECT_FALSE(spec.ok()) << doc;
  return std::string(spec.status().message());
}

TEST(CaseModelTest, PresetWithTheCaseConfig) {
  auto spec = ModelSpecFromCase(Json(R"({"model": "glm4v_moe", "config": {
      "image_token_id": 7, "image_start_token_id": 8, "spatial_merge_size": 4,
      "rope_theta": 20000.0, "checkpoint": "zai-org/GLM-4.5V", "patch_size": 14,
      "pad_token_id": 151329, "head_dim": 128, "hidden_size": 4096, "num_attention_heads": 96,
      "max_position_embeddings": 65536}})"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "glm4v_moe");
  EXPECT_EQ(FamilyOf(spec->positions).family, ModelFamily::kGlm4vMoe);
  EXPECT_EQ(spec->positions.tokens.image, 7);
  EXPECT_EQ(spec->positions.tokens.vision_start, 8);  // GLM's image_start
  EXPECT_EQ(spec->positions.tokens.video, 151364);    // the preset's
  EXPECT_EQ(spec->positions.spatial_merge_size, 4);
  ASSERT_TRUE(spec->rope.has_value());
  EXPECT_EQ(spec->rope->scaling.theta, 20000.0);
}

TEST(CaseModelTest, VllmRequestCasesUseTheFamilysVllmPreset) {
  auto model = CaseModelOf(Json(R"({"model": "qwen3_vl_vllm_evs", "convention": "vllm_evs",
      "config": {"checkpoint": "Qwen/Qwen3-VL-8B-Instruct", "temporal_patch_size": 2,
                 "image_token_id": 151655}})"));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->preset, "qwen3_vl_vllm");
  ASSERT_EQ(model->overrides.struct_value().fields().size(), 1);
  EXPECT_EQ(model->overrides.struct_value().fields().at("image_token_id").number_value(), 151655);
}

TEST(CaseModelTest, ErrorsNameTheKey) {
  EXPECT_THAT(CaseError(R"({"config": {}})"), HasSubstr("model"));
  EXPECT_THAT(CaseError(R"({"model": "llava"})"), HasSubstr("unknown preset 'llava'"));
  EXPECT_THAT(CaseError(R"({"model": "qwen2_vl", "config": {"spatial_merge_size": 0}})"),
              HasSubstr("config.spatial_merge_size must be in [1, 64], got 0"));
  EXPECT_THAT(CaseError(R"({"model": "glm4v", "config": {"video_end_token_id": "x"}})"),
              HasSubstr("config.video_end_token_id"));
  // Only the provenance keys are skipped: another unknown key is refused.
  EXPECT_THAT(CaseError(R"({"model": "qwen2_vl", "config": {"bogus_key": 1}})"),
              AllOf(HasSubstr("config: unknown key 'bogus_key'"), HasSubstr("rope_theta")));
  EXPECT_THAT(CaseError(R"({"model": "qwen2_vl", "config": [1]})"),
              HasSubstr("config: expected an object"));
}

}  // namespace
}  // namespace mrope
