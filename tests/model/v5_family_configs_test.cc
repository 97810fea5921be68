// The families new in transformers 5.x load from their config.json, nested as the hub files are
// (examples/configs/v5_defaults: the configuration classes' defaults, v5.2.0's; Qwen4-Exp's
// 5.23.0's with the checkpoint's partial rotary), into their row's preset: ids, merge sizes,
// reference convention and rotary values.

#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "mrope/model/model_family.h"
#include "mrope/service/model_spec.h"
#include "mrope/service/preset_overrides.h"

namespace mrope {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr char kDir[] = "examples/configs/v5_defaults/";
constexpr char kVllmDir[] = "examples/configs/vllm_families/";

void ExpectSameRope(const std::optional<RopeParameters>& got,
                    const std::optional<RopeParameters>& want) {
  ASSERT_EQ(got.has_value(), want.has_value());
  if (!got.has_value()) return;
  EXPECT_EQ(got->head_dim, want->head_dim);
  EXPECT_EQ(got->scaling.rotary_dim, want->scaling.rotary_dim);
  EXPECT_EQ(got->scaling.theta, want->scaling.theta);
  EXPECT_THAT(got->mrope_section, ElementsAreArray(want->mrope_section));
  EXPECT_EQ(got->mrope_layout, want->mrope_layout);
}

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
  EXPECT_EQ(RotaryLayoutOf(spec), RotaryLayoutOf(preset));
  EXPECT_THAT(spec.layer_types, ElementsAreArray(preset.layer_types));
  ASSERT_EQ(spec.layer_type_ropes.size(), preset.layer_type_ropes.size());
  for (size_t i = 0; i < spec.layer_type_ropes.size(); ++i) {
    SCOPED_TRACE(preset.layer_type_ropes[i].layer_type);
    EXPECT_EQ(spec.layer_type_ropes[i].layer_type, preset.layer_type_ropes[i].layer_type);
    ExpectSameRope(spec.layer_type_ropes[i].rope, preset.layer_type_ropes[i].rope);
  }
  ExpectSameRope(spec.rope, preset.rope);
}

TEST(V5FamilyConfigsTest, EveryNewFamilyLoadsIntoItsPreset) {
  std::vector<std::string> loaded;
  for (const ModelFamilyInfo& row : ModelFamilies()) {
    if (row.preset.convention == Convention::kHfV4 || row.preset.convention == Convention::kVllm) {
      continue;
    }
    const std::string path = absl::StrCat(kDir, row.name, ".json");
    auto spec = LoadModelSpec(path);
    ASSERT_TRUE(spec.ok()) << spec.status();
    ExpectPreset(*spec, row.name);
    loaded.emplace_back(row.name);
  }
  EXPECT_THAT(loaded, ElementsAre("qwen3_5", "qwen3_5_moe", "glm46v", "glm_ocr", "paddleocr_vl",
                                  "ernie4_5_vl_moe", "glm_image", "qwen4_exp", "cosmos3_omni",
                                  "cosmos3_edge", "cohere_compass", "hunyuan_vl"));
}

// The text_config object of Cohere Compass's example config.json, to edit.
google::protobuf::Map<std::string, google::protobuf::Value>& TextConfig(
    google::protobuf::Value& doc) {
  return *(*doc.mutable_struct_value()->mutable_fields())["text_config"]
              .mutable_struct_value()
              ->mutable_fields();
}

// Cohere Compass: one rotary per layer type, as its rotary module reads them (null: NoPE; a
// missing type or a flat rope_parameters fails there), head_dim from hidden_size / heads.
TEST(V5FamilyConfigsTest, CohereCompassRotaryPerLayerType) {
  auto doc = ReadJsonFile(absl::StrCat(kDir, "cohere_compass.json")).value();
  const ModelSpec spec = ModelSpecFromHfConfig(doc).value();
  EXPECT_FALSE(spec.rope.has_value());
  ASSERT_EQ(spec.layer_types.size(), 40u);
  EXPECT_EQ(spec.layer_types[2], "sliding_attention");
  EXPECT_EQ(spec.layer_types[3], "full_attention");
  ASSERT_EQ(spec.layer_type_ropes.size(), 2u);
  const ModelSpec sliding = ModelSpecForLayerType(spec, "sliding_attention").value();
  ASSERT_TRUE(sliding.rope.has_value());
  EXPECT_EQ(sliding.rope->head_dim, 128);
  EXPECT_EQ(sliding.rope->mrope_layout, MropeLayout::kInterleaved);
  EXPECT_TRUE(sliding.layer_types.empty());
  EXPECT_FALSE(ModelSpecForLayerType(spec, "full_attention").value().rope.has_value());
  EXPECT_THAT(ModelSpecForLayerType(spec, "chunked").status().message(),
              HasSubstr("its types: sliding_attention, full_attention"));
  EXPECT_THAT(SingleRope(spec).status().message(),
              HasSubstr("rotary per layer type (sliding_attention, full_attention)"));

  auto& text = TextConfig(doc);
  auto& ropes = *text["rope_parameters"].mutable_struct_value()->mutable_fields();
  ropes["sliding_attention"].mutable_struct_value()->mutable_fields()->erase("mrope_section");
  (*ropes["sliding_attention"].mutable_struct_value()->mutable_fields())["rope_theta"]
      .set_number_value(5e4);
  text["hidden_size"].set_number_value(4096);
  const ModelSpec edited = ModelSpecFromHfConfig(doc).value();
  const RopeParameters& rope = *edited.layer_type_ropes[0].rope;
  EXPECT_EQ(rope.head_dim, 64);
  EXPECT_EQ(rope.scaling.theta, 5e4);
  EXPECT_THAT(rope.mrope_section, ElementsAre(24, 20, 20));  // the module's default

  (*ropes["sliding_attention"].mutable_struct_value()->mutable_fields())["partial_rotary_factor"]
      .set_number_value(0.5);
  EXPECT_THAT(ModelSpecFromHfConfig(doc).status().message(),
              HasSubstr("rope_parameters.sliding_attention.partial_rotary_factor: transformers "
                        "and vLLM disagree"));
  ropes["sliding_attention"].mutable_struct_value()->mutable_fields()->erase(
      "partial_rotary_factor");
  ropes.erase("full_attention");
  EXPECT_THAT(ModelSpecFromHfConfig(doc).status().message(),
              HasSubstr("missing required field 'text_config.rope_parameters.full_attention'"));
  text.erase("rope_parameters");
  EXPECT_THAT(ModelSpecFromHfConfig(doc).status().message(),
              HasSubstr("missing required field 'text_config.rope_parameters'"));
  text.erase("layer_types");  // HF's default: every layer full_attention
  text["rope_parameters"].mutable_struct_value();
  EXPECT_THAT(ModelSpecFromHfConfig(doc).status().message(),
              HasSubstr("'text_config.rope_parameters.full_attention'"));
}

// The families whose only reference is vLLM load from their config.json layouts
// (examples/configs/vllm_families) into their presets.
TEST(VllmFamilyConfigsTest, EveryVllmFamilyLoadsIntoItsPreset) {
  std::vector<std::string> loaded;
  for (const ModelFamilyInfo& row : ModelFamilies()) {
    if (row.preset.convention != Convention::kVllm) continue;
    auto spec = LoadModelSpec(absl::StrCat(kVllmDir, row.name, ".json"));
    ASSERT_TRUE(spec.ok()) << spec.status();
    ExpectPreset(*spec, row.name);
    loaded.emplace_back(row.name);
  }
  EXPECT_THAT(loaded, ElementsAre("openpangu_vl", "isaac", "keye"));
}

// Ids the reference takes from the tokenizer: config.json's when given, else the preset's;
// Isaac's merge size is vision_config.pixel_shuffle_scale_factor.
TEST(VllmFamilyConfigsTest, TokenizerIdsAndIsaacsMergeKey) {
  auto keye = ReadJsonFile(absl::StrCat(kVllmDir, "keye.json")).value();
  auto& fields = *keye.mutable_struct_value()->mutable_fields();
  fields.erase("image_token_id");
  fields["video_token_id"].set_number_value(7);
  auto spec = ModelSpecFromHfConfig(keye);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->positions.tokens.image, 151655);
  EXPECT_EQ(spec->positions.tokens.video, 7);

  auto isaac = ReadJsonFile(absl::StrCat(kVllmDir, "isaac.json")).value();
  (*(*isaac.mutable_struct_value()->mutable_fields())["vision_config"]
        .mutable_struct_value()
        ->mutable_fields())["pixel_shuffle_scale_factor"]
      .set_number_value(2);
  spec = ModelSpecFromHfConfig(isaac);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->positions.spatial_merge_size, 2);

  // openPangu-VL's ids are config.json's (vLLM reads config.image_token_id): required.
  auto pangu = ReadJsonFile(absl::StrCat(kVllmDir, "openpangu_vl.json")).value();
  pangu.mutable_struct_value()->mutable_fields()->erase("video_token_id");
  EXPECT_THAT(std::string(ModelSpecFromHfConfig(pangu).status().message()),
              HasSubstr("missing required field 'video_token_id'"));
}

// The fields of `doc`'s object at `key` ("" the top level), created if absent.
google::protobuf::Map<std::string, google::protobuf::Value>& Fields(google::protobuf::Value& doc,
                                                                    absl::string_view key = "") {
  google::protobuf::Value* object = &doc;
  if (!key.empty()) object = &(*doc.mutable_struct_value()->mutable_fields())[std::string(key)];
  return *object->mutable_struct_value()->mutable_fields();
}

// Isaac's sections are [d // 4, d // 8, d // 8] of the top-level head_dim d (IsaacConfig's,
// 128 when absent), whatever config.json's mrope_section says, as IsaacForConditionalGeneration
// writes them; its mrope_interleaved is read. python/tests/test_reference_vllm_rotary.py checks
// these against vLLM's own code.
TEST(VllmFamilyConfigsTest, IsaacSectionsFromTopLevelHeadDim) {
  for (const int head_dim : {64, 128, 256}) {
    SCOPED_TRACE(head_dim);
    auto doc = ReadJsonFile(absl::StrCat(kVllmDir, "isaac.json")).value();
    Fields(doc)["head_dim"].set_number_value(head_dim);
    Fields(doc, "text_config")["head_dim"].set_number_value(head_dim);
    auto spec = ModelSpecFromHfConfig(doc);
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_THAT(spec->rope->mrope_section,
                ElementsAre(head_dim / 4, head_dim / 8, head_dim / 8));
    EXPECT_EQ(spec->rope->mrope_layout, MropeLayout::kBlocked);
  }
  // Flat (IsaacConfig's backward-compatible form): the text keys at the top level.
  auto doc = ReadJsonFile(absl::StrCat(kVllmDir, "isaac.json")).value();
  google::protobuf::Value text = Fields(doc)["text_config"];
  Fields(doc).erase("text_config");
  for (const auto& [key, value] : text.struct_value().fields()) {
    if (key != "model_type") Fields(doc)[key] = value;
  }
  Fields(doc)["head_dim"].set_number_value(64);
  auto& rope = Fields(Fields(doc)["rope_parameters"]);
  for (const int s : {8, 12, 12}) rope["mrope_section"].mutable_list_value()->add_values()
                                     ->set_number_value(s);
  rope["mrope_interleaved"].set_bool_value(true);
  auto spec = ModelSpecFromHfConfig(doc);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->rope->mrope_section, ElementsAre(16, 8, 8));
  EXPECT_EQ(spec->rope->mrope_layout, MropeLayout::kInterleaved);
  // Preset overrides are read as config.json's.
  google::protobuf::Value overrides;
  Fields(overrides)["head_dim"].set_number_value(256);
  spec = PresetModelSpecWithOverrides("isaac", overrides, "overrides");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->rope->mrope_section, ElementsAre(64, 32, 32));
}

// What vLLM's MRotaryEmbedding refuses (its sections not summing to rotary_dim / 2) is refused,
// naming the head_dim.
TEST(VllmFamilyConfigsTest, IsaacHeadDimsVllmRefuses) {
  auto doc = ReadJsonFile(absl::StrCat(kVllmDir, "isaac.json")).value();
  Fields(doc, "text_config")["head_dim"].set_number_value(68);
  Fields(doc)["head_dim"].set_number_value(68);
  EXPECT_THAT(std::string(ModelSpecFromHfConfig(doc).status().message()),
              HasSubstr("isaac derives mrope_section [17, 8, 8] from the top-level head_dim 68 "
                        "(head_dim // 4, // 8, // 8, as vLLM does), which must sum to "
                        "rotary_dim / 2 = 34 of text_config.head_dim 68"));
  // text_config's head_dim alone: vLLM derives from IsaacConfig's own, 128 by default.
  Fields(doc).erase("head_dim");
  Fields(doc, "text_config")["head_dim"].set_number_value(64);
  EXPECT_THAT(std::string(ModelSpecFromHfConfig(doc).status().message()),
              HasSubstr("[32, 16, 16] from the top-level head_dim 128"));
}

// Without head_dim, Isaac's text rotary and its sections take Qwen3Config's field default 128
// (IsaacConfig and its text_config are Qwen3Configs), not hidden_size / num_attention_heads.
TEST(VllmFamilyConfigsTest, IsaacHeadDimDefaultsToQwen3Configs) {
  auto doc = ReadJsonFile(absl::StrCat(kVllmDir, "isaac.json")).value();
  Fields(doc, "text_config").erase("head_dim");
  Fields(doc, "text_config")["hidden_size"].set_number_value(2048);  // 2048 / 32 = 64
  auto spec = ModelSpecFromHfConfig(doc);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->rope->head_dim, 128);
  EXPECT_EQ(spec->rope->scaling.rotary_dim, 128);
  EXPECT_THAT(spec->rope->mrope_section, ElementsAre(32, 16, 16));
  // A top-level head_dim alone does not reach the text model: its rotary stays at 128.
  Fields(doc)["head_dim"].set_number_value(64);
  EXPECT_THAT(std::string(ModelSpecFromHfConfig(doc).status().message()),
              HasSubstr("[16, 8, 8] from the top-level head_dim 64 (head_dim // 4, // 8, // 8, "
                        "as vLLM does), which must sum to rotary_dim / 2 = 64 of "
                        "text_config.head_dim 128"));
}

// Keye-VL's and openPangu-VL's sections are the checkpoint's (vLLM has no default for them);
// openPangu's interleaving is its own order (MRotaryEmbeddingInterleaved: kPanguInterleaved).
TEST(VllmFamilyConfigsTest, KeyeAndPanguSectionsFromConfig) {
  for (const auto& [name, text_key] :
       {std::make_pair("keye", ""), std::make_pair("openpangu_vl", "text_config")}) {
    SCOPED_TRACE(name);
    auto doc = ReadJsonFile(absl::StrCat(kVllmDir, name, ".json")).value();
    auto& text = Fields(doc, text_key);
    text["head_dim"].set_number_value(64);
    auto& sections = *Fields(text["rope_scaling"])["mrope_section"].mutable_list_value();
    sections.clear_values();
    for (const int s : {8, 12, 12}) sections.add_values()->set_number_value(s);
    auto spec = ModelSpecFromHfConfig(doc);
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_THAT(spec->rope->mrope_section, ElementsAre(8, 12, 12));
    EXPECT_EQ(spec->rope->mrope_layout, MropeLayout::kBlocked);
    sections.clear_values();
    for (const int s : {12, 10, 10}) sections.add_values()->set_number_value(s);
    Fields(text["rope_scaling"])["mrope_interleaved"].set_bool_value(true);
    spec = ModelSpecFromHfConfig(doc);
    if (std::string(name) == "keye") {
      ASSERT_TRUE(spec.ok()) << spec.status();
      EXPECT_EQ(spec->rope->mrope_layout, MropeLayout::kInterleaved);  // Qwen3-VL's order
    } else {
      ASSERT_TRUE(spec.ok()) << spec.status();
      EXPECT_EQ(spec->rope->mrope_layout, MropeLayout::kPanguInterleaved);
      // Preset overrides are read as config.json's.
      google::protobuf::Value overrides;
      Fields(overrides)["mrope_interleaved"].set_bool_value(true);
      auto overridden = PresetModelSpecWithOverrides(name, overrides, "overrides");
      ASSERT_TRUE(overridden.ok()) << overridden.status();
      EXPECT_EQ(overridden->rope->mrope_layout, MropeLayout::kPanguInterleaved);
      // vLLM builds these sections unscaled whatever the rope_type: a scaled one is refused.
      auto& rope = Fields(text["rope_scaling"]);
      rope["type"].set_string_value("linear");
      rope["factor"].set_number_value(2);
      EXPECT_THAT(std::string(ModelSpecFromHfConfig(doc).status().message()),
                  HasSubstr("rope_scaling.rope_type 'linear': pangu_interleaved sections (vLLM's "
                            "MRotaryEmbeddingInterleaved) take unscaled RoPE"));
      // Its rule always gives t the last pair.
      rope["type"].set_string_value("default");
      sections.clear_values();
      for (const int s : {0, 16, 16}) sections.add_values()->set_number_value(s);
      EXPECT_THAT(std::string(ModelSpecFromHfConfig(doc).status().message()),
                  HasSubstr("pangu_interleaved mrope_section [0, 16, 16]: its t entry must be "
                            ">= 1"));
    }
  }
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
