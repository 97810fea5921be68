// Model configuration: presets, the published HF config.json files (examples/configs) and the
// ModelParams proto give the expected token ids, time scales and rotary parameters; missing
// required keys are errors naming them.

#include "mrope/service/model_spec.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "mrope/model/model_family.h"
#include "mrope/service/textproto.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kConfigDir[] = "examples/configs/";

Value ReadConfig(const std::string& name) {
  auto doc = ReadJsonFile(kConfigDir + name);
  EXPECT_TRUE(doc.ok()) << doc.status();
  return doc.ok() ? *doc : Value();
}

// Removes `path` (dot-separated object keys) from `doc`.
void Erase(Value& doc, const std::vector<std::string>& path) {
  Value* object = &doc;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    object = &(*object->mutable_struct_value()->mutable_fields())[path[i]];
  }
  object->mutable_struct_value()->mutable_fields()->erase(path.back());
}

void ExpectQwenVisionIds(const ModelConfig& config) {
  EXPECT_EQ(config.tokens.image, 151655);
  EXPECT_EQ(config.tokens.video, 151656);
  EXPECT_EQ(config.tokens.vision_start, 151652);
  EXPECT_EQ(config.tokens.vision_end, 151653);
  EXPECT_EQ(config.spatial_merge_size, 2);
}

void ExpectRope(const ModelSpec& spec, double theta, std::vector<int32_t> sections,
                bool interleaved) {
  ASSERT_TRUE(spec.rope.has_value());
  EXPECT_EQ(spec.rope->head_dim, 128);
  EXPECT_EQ(spec.rope->scaling.rotary_dim, 128);
  EXPECT_EQ(spec.rope->scaling.type, RopeType::kDefault);
  EXPECT_EQ(spec.rope->scaling.theta, theta);
  EXPECT_EQ(spec.rope->mrope_section, sections);
  EXPECT_EQ(spec.rope->mrope_layout == MropeLayout::kInterleaved, interleaved);
}

TEST(HfConfigTest, Qwen2Vl) {
  auto spec = ModelSpecFromHfConfig(ReadConfig("Qwen2-VL-7B-Instruct.json"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "qwen2_vl");
  EXPECT_EQ(FamilyOf(spec->positions).family, ModelFamily::kQwen2Vl);
  ExpectQwenVisionIds(spec->positions);
  // head_dim = hidden_size / num_attention_heads = 3584 / 28.
  ExpectRope(*spec, 1e6, {16, 24, 24}, false);
}

TEST(HfConfigTest, Qwen2_5Vl) {
  auto spec = ModelSpecFromHfConfig(ReadConfig("Qwen2.5-VL-7B-Instruct.json"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(FamilyOf(spec->positions).family, ModelFamily::kQwen2_5Vl);
  ExpectQwenVisionIds(spec->positions);
  EXPECT_EQ(spec->positions.tokens_per_second, 2);
  EXPECT_EQ(spec->positions.video_time_rounding, VideoTimeRounding::kScaleThenTruncate);
  EXPECT_EQ(spec->positions.convention, Convention::kHfV4);
  ExpectRope(*spec, 1e6, {16, 24, 24}, false);
}

TEST(HfConfigTest, Qwen3Vl) {
  auto spec = ModelSpecFromHfConfig(ReadConfig("Qwen3-VL-8B-Instruct.json"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(FamilyOf(spec->positions).family, ModelFamily::kQwen3Vl);
  ExpectQwenVisionIds(spec->positions);
  ExpectRope(*spec, 5e6, {24, 20, 20}, true);
}

TEST(HfConfigTest, Qwen2_5Omni) {
  auto spec = ModelSpecFromHfConfig(ReadConfig("Qwen2.5-Omni-7B.json"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  const ModelConfig& c = spec->positions;
  EXPECT_EQ(FamilyOf(c).family, ModelFamily::kQwen2_5Omni);
  ExpectQwenVisionIds(c);  // image/video from *_token_index
  EXPECT_EQ(c.tokens.audio, 151646);
  EXPECT_EQ(c.tokens.audio_start, 151647);
  EXPECT_EQ(c.tokens.audio_end, 151648);
  EXPECT_EQ(c.position_id_per_seconds, 25);
  EXPECT_EQ(c.seconds_per_chunk, 2);
  ExpectRope(*spec, 1e6, {16, 24, 24}, false);
}

TEST(HfConfigTest, Qwen3Omni) {
  auto spec = ModelSpecFromHfConfig(ReadConfig("Qwen3-Omni-30B-A3B-Instruct.json"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  const ModelConfig& c = spec->positions;
  EXPECT_EQ(FamilyOf(c).family, ModelFamily::kQwen3Omni);
  ExpectQwenVisionIds(c);
  EXPECT_EQ(c.tokens.audio, 151675);
  EXPECT_EQ(c.tokens.audio_start, 151669);
  EXPECT_EQ(c.tokens.audio_end, 151670);
  EXPECT_EQ(c.position_id_per_seconds, 13);
  ExpectRope(*spec, 1e6, {24, 20, 20}, true);
}

// Each published config gives the same positions parameters as the family's preset.
TEST(HfConfigTest, MatchesPresets) {
  const std::pair<const char*, const char*> kPairs[] = {
      {"Qwen2-VL-7B-Instruct.json", "qwen2_vl"},
      {"Qwen2.5-VL-7B-Instruct.json", "qwen2_5_vl"},
      {"Qwen3-VL-8B-Instruct.json", "qwen3_vl"},
      {"Qwen2.5-Omni-7B.json", "qwen2_5_omni"},
      {"Qwen3-Omni-30B-A3B-Instruct.json", "qwen3_omni"},
  };
  for (const auto& [file, preset_name] : kPairs) {
    SCOPED_TRACE(file);
    auto spec = ModelSpecFromHfConfig(ReadConfig(file));
    auto preset = PresetModelSpec(preset_name);
    ASSERT_TRUE(spec.ok()) << spec.status();
    ASSERT_TRUE(preset.ok()) << preset.status();
    const ModelConfig& a = spec->positions;
    const ModelConfig& b = preset->positions;
    EXPECT_EQ(a.rules, b.rules);
    EXPECT_EQ(a.tokens.image, b.tokens.image);
    EXPECT_EQ(a.tokens.audio, b.tokens.audio);
    EXPECT_EQ(a.tokens.audio_start, b.tokens.audio_start);
    EXPECT_EQ(a.tokens.audio_end, b.tokens.audio_end);
    EXPECT_EQ(a.spatial_merge_size, b.spatial_merge_size);
    EXPECT_EQ(a.tokens_per_second, b.tokens_per_second);
    EXPECT_EQ(a.position_id_per_seconds, b.position_id_per_seconds);
    EXPECT_EQ(a.seconds_per_chunk, b.seconds_per_chunk);
    ASSERT_TRUE(preset->rope.has_value());
    ExpectRope(*spec, preset->rope->scaling.theta, preset->rope->mrope_section,
               preset->rope->mrope_layout == MropeLayout::kInterleaved);
  }
}

TEST(HfConfigTest, MissingRequiredFieldsAreNamed) {
  struct Case {
    const char* file;
    std::vector<std::string> path;
    const char* message;
  };
  const Case kCases[] = {
      {"Qwen2-VL-7B-Instruct.json", {"image_token_id"}, "'image_token_id' (or image_token_index)"},
      {"Qwen2-VL-7B-Instruct.json", {"rope_theta"}, "'rope_theta'"},
      {"Qwen2-VL-7B-Instruct.json", {"model_type"}, "model_type"},
      {"Qwen2.5-VL-7B-Instruct.json",
       {"vision_config", "tokens_per_second"},
       "'vision_config.tokens_per_second' for qwen2_5_vl"},
      {"Qwen3-VL-8B-Instruct.json", {"text_config", "rope_theta"}, "text_config: "},
      {"Qwen2.5-Omni-7B.json",
       {"thinker_config", "audio_token_index"},
       "'thinker_config.audio_token_id' (or audio_token_index)"},
      {"Qwen2.5-Omni-7B.json",
       {"thinker_config", "position_id_per_seconds"},
       "'thinker_config.position_id_per_seconds' for qwen2_5_omni"},
      {"Qwen3-Omni-30B-A3B-Instruct.json", {"thinker_config"}, "thinker_config"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.message);
    Value doc = ReadConfig(c.file);
    Erase(doc, c.path);
    auto spec = ModelSpecFromHfConfig(doc);
    ASSERT_FALSE(spec.ok());
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(spec.status().message()), HasSubstr(c.message));
  }
}

TEST(HfConfigTest, OptionalFieldsTakeHfDefaults) {
  Value doc = ReadConfig("Qwen2.5-Omni-7B.json");
  Erase(doc, {"thinker_config", "seconds_per_chunk"});
  Erase(doc, {"thinker_config", "vision_config", "spatial_merge_size"});
  auto spec = ModelSpecFromHfConfig(doc);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->positions.seconds_per_chunk, 2);
  EXPECT_EQ(spec->positions.spatial_merge_size, 2);
}

TEST(HfConfigTest, RefusesUnknownModelTypeAndBadValues) {
  auto doc = ParseJson(R"({"model_type": "llava"})");
  ASSERT_TRUE(doc.ok());
  auto spec = ModelSpecFromHfConfig(*doc);
  EXPECT_THAT(std::string(spec.status().message()),
              HasSubstr("model_type 'llava' is not a supported model; supported: qwen2_vl"));

  Value config = ReadConfig("Qwen2-VL-7B-Instruct.json");
  (*config.mutable_struct_value()->mutable_fields())["video_token_id"].set_number_value(151655);
  spec = ModelSpecFromHfConfig(config);
  EXPECT_THAT(std::string(spec.status().message()),
              HasSubstr("video_token_id and image_token_id are both 151655"));
}

// The GLM-4.1V config.json keys mrope reads (the Glm4vConfig defaults of HF v4.57.6 and the
// checkpoint's rope values, tests/golden/README.md); the rest of the file is left out.
constexpr char kGlm41vConfig[] = R"({
  "model_type": "glm4v",
  "image_start_token_id": 151339, "image_end_token_id": 151340,
  "video_start_token_id": 151341, "video_end_token_id": 151342,
  "image_token_id": 151343, "video_token_id": 151344,
  "vision_config": {"model_type": "glm4v", "spatial_merge_size": 2},
  "text_config": {
    "model_type": "glm4v_text", "hidden_size": 4096, "num_attention_heads": 32,
    "partial_rotary_factor": 0.5, "rope_theta": 10000, "max_position_embeddings": 65536,
    "rope_scaling": {"type": "default", "mrope_section": [8, 12, 12]}
  }
})";

TEST(HfConfigTest, Glm4vAndGlm4vMoe) {
  auto doc = ParseJson(kGlm41vConfig);
  ASSERT_TRUE(doc.ok()) << doc.status();
  auto spec = ModelSpecFromHfConfig(*doc);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const ModelConfig& c = spec->positions;
  EXPECT_EQ(FamilyOf(c).family, ModelFamily::kGlm4v);
  EXPECT_EQ(c.tokens.image, 151343);
  EXPECT_EQ(c.tokens.video, 151344);
  EXPECT_EQ(c.tokens.vision_start, 151339);
  EXPECT_EQ(c.tokens.vision_end, 151340);
  EXPECT_EQ(c.tokens.video_start, 151341);
  EXPECT_EQ(c.tokens.video_end, 151342);
  ASSERT_TRUE(spec->rope.has_value());
  EXPECT_EQ(spec->rope->head_dim, 128);
  EXPECT_EQ(spec->rope->scaling.rotary_dim, 64);
  EXPECT_EQ(spec->rope->scaling.theta, 10000);
  EXPECT_THAT(spec->rope->mrope_section, ElementsAre(8, 12, 12));

  // GLM-4.5V: its own model_type and image/video ids.
  auto& fields = *doc->mutable_struct_value()->mutable_fields();
  fields["model_type"].set_string_value("glm4v_moe");
  fields["image_token_id"].set_number_value(151363);
  fields["video_token_id"].set_number_value(151364);
  spec = ModelSpecFromHfConfig(*doc);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(FamilyOf(spec->positions).family, ModelFamily::kGlm4vMoe);
  auto preset = PresetConfig("glm4v_moe");
  ASSERT_TRUE(preset.ok());
  EXPECT_EQ(spec->positions.tokens.image, preset->tokens.image);
  EXPECT_EQ(spec->positions.tokens.video, preset->tokens.video);

  // The video brackets are required, under their HF names.
  fields.erase("video_start_token_id");
  spec = ModelSpecFromHfConfig(*doc);
  EXPECT_THAT(std::string(spec.status().message()),
              HasSubstr("missing required field 'video_start_token_id' (or "
                        "video_start_token_index) for glm4v_moe"));
  fields["video_start_token_id"].set_number_value(151342);
  spec = ModelSpecFromHfConfig(*doc);
  EXPECT_THAT(std::string(spec.status().message()),
              HasSubstr("video_end_token_id and video_start_token_id are both 151342"));
}

TEST(HfConfigTest, UnknownModelTypeListsTheTable) {
  auto doc = ParseJson(R"({"model_type": "llava"})");
  ASSERT_TRUE(doc.ok());
  EXPECT_THAT(std::string(ModelSpecFromHfConfig(*doc).status().message()),
              HasSubstr("model_type 'llava' is not a supported model; supported: qwen2_vl, "
                        "qwen2_5_vl, qwen3_vl, qwen3_vl_moe, qwen2_5_omni, "
                        "qwen2_5_omni_thinker, qwen3_omni_moe, qwen3_omni_moe_thinker, glm4v, "
                        "glm4v_moe"));
}

TEST(PresetTest, EveryPresetHasRotaryParameters) {
  const std::vector<std::string> names = PresetNames();
  EXPECT_THAT(names,
              ElementsAre("qwen2_vl", "qwen2_vl_hf_v5_2", "qwen2_vl_hf_v5", "qwen2_vl_vllm",
                          "qwen2_5_vl", "qwen2_5_vl_hf", "qwen2_5_vl_hf_v5_2", "qwen2_5_vl_hf_v5",
                          "qwen2_5_vl_vllm", "qwen2_5_vl_hf_v5_18", "qwen3_vl", "qwen3_vl_hf_v5_2",
                          "qwen3_vl_hf_v5", "qwen3_vl_vllm", "qwen2_5_omni", "qwen2_5_omni_hf_v5_2",
                          "qwen2_5_omni_hf_v5", "qwen3_omni", "qwen3_omni_hf_v5_2",
                          "qwen3_omni_hf_v5", "glm4v", "glm4v_hf_v5_2", "glm4v_hf_v5", "glm4v_moe",
                          "glm4v_moe_hf_v5_2", "qwen3_5", "qwen3_5_hf_v5", "qwen3_5_moe",
                          "qwen3_5_moe_hf_v5", "glm46v", "glm46v_hf_v5", "glm_ocr", "paddleocr_vl",
                          "paddleocr_vl_hf_v5", "ernie4_5_vl_moe", "ernie4_5_vl_moe_hf_v5",
                          "glm_image", "qwen4_exp", "cosmos3_omni", "cosmos3_omni_vllm",
                          "cosmos3_edge", "cosmos3_edge_vllm", "openpangu_vl", "isaac", "keye",
                          "cohere_compass", "cohere_compass_vllm", "hunyuan_vl"));
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    auto spec = PresetModelSpec(name);
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_EQ(spec->name, name);
    // Cohere Compass: a rotary per layer type, its NoPE full_attention layers without one.
    for (const LayerTypeRope& type : spec->layer_type_ropes) {
      if (type.layer_type == "full_attention") continue;
      ASSERT_TRUE(type.rope.has_value()) << type.layer_type;
      EXPECT_TRUE(ValidateRopeParameters(*type.rope).ok());
    }
    if (!spec->layer_type_ropes.empty()) continue;
    ASSERT_TRUE(spec->rope.has_value());
    EXPECT_TRUE(ValidateRopeParameters(*spec->rope).ok());
  }
  auto hf = PresetModelSpec("qwen2_5_vl_hf");
  EXPECT_EQ(hf->positions.video_time_rounding, VideoTimeRounding::kTruncateIntervalFirst);
  EXPECT_FALSE(PresetModelSpec("qwen4_vl").ok());
}

TEST(ProtoTest, StartsFromThePresetAndAppliesSetFields) {
  v1::ModelParams params;
  ASSERT_TRUE(ParseTextproto(R"pb(
                               name: "custom"
                               positions {
                                 family: QWEN2_5_VL
                                 tokens_per_second: 4
                                 video_time_rounding: TRUNCATE_INTERVAL_FIRST
                                 convention: VLLM
                               }
                               rope {
                                 head_dim: 64
                                 rope_theta: 10000
                                 mrope_section: [ 8, 12, 12 ]
                               }
                             )pb",
                             "test", params)
                  .ok());
  auto spec = ModelSpecFromProto(params);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "custom");
  ExpectQwenVisionIds(spec->positions);  // from the preset
  EXPECT_EQ(spec->positions.tokens_per_second, 4);
  EXPECT_EQ(spec->positions.video_time_rounding, VideoTimeRounding::kTruncateIntervalFirst);
  EXPECT_EQ(spec->positions.convention, Convention::kVllm);
  ASSERT_TRUE(spec->rope.has_value());
  EXPECT_EQ(spec->rope->head_dim, 64);
  EXPECT_EQ(spec->rope->scaling.rotary_dim, 64);
  EXPECT_EQ(spec->rope->scaling.theta, 10000);
  EXPECT_THAT(spec->rope->mrope_section, ElementsAre(8, 12, 12));
}

// As for config.json: a transformers 5.x family's rotary code decides how its sections map
// pairs to axes (ERNIE's h/w alternation cannot be said with mrope_interleaved).
TEST(ProtoTest, RotaryCodeFamiliesTakeTheirMropeLayout) {
  v1::ModelParams params;
  ASSERT_TRUE(ParseTextproto(R"pb(
                               positions { family: ERNIE4_5_VL_MOE }
                               rope {
                                 head_dim: 128
                                 rope_theta: 500000
                                 mrope_section: [ 22, 22, 20 ]
                               }
                             )pb",
                             "test", params)
                  .ok());
  auto spec = ModelSpecFromProto(params);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->rope->mrope_layout, MropeLayout::kHwAlternatingThenT);
}

// As for config.json: mrope_interleaved selects openPangu-VL's own order (vLLM's
// MRotaryEmbeddingInterleaved), not Qwen3-VL's; Isaac's head_dim defaults to IsaacConfig's.
TEST(ProtoTest, FamilyRulesOfVllmFamilies) {
  v1::ModelParams params;
  ASSERT_TRUE(ParseTextproto(R"pb(
                               positions { family: OPENPANGU_VL }
                               rope {
                                 head_dim: 128
                                 rope_theta: 64000000
                                 mrope_section: [ 24, 20, 20 ]
                                 mrope_interleaved: true
                               }
                             )pb",
                             "test", params)
                  .ok());
  auto spec = ModelSpecFromProto(params);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->rope->mrope_layout, MropeLayout::kPanguInterleaved);
  ASSERT_TRUE(ParseTextproto(R"pb(
                               positions { family: ISAAC }
                               rope { rope_theta: 10000 mrope_section: [ 32, 16, 16 ] }
                             )pb",
                             "test", params)
                  .ok());
  spec = ModelSpecFromProto(params);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->rope->head_dim, 128);
}

// HF (0) is the family's reference convention; the named ones must be implemented for it.
TEST(ProtoTest, Conventions) {
  const auto convention = [](const std::string& positions) -> absl::StatusOr<Convention> {
    v1::ModelParams params;
    EXPECT_TRUE(ParseTextproto("positions { " + positions + " }", "test", params).ok());
    auto spec = ModelSpecFromProto(params);
    if (!spec.ok()) return spec.status();
    return spec->positions.convention;
  };
  EXPECT_EQ(convention("family: QWEN2_VL").value(), Convention::kHfV4);
  EXPECT_EQ(convention("family: GLM_IMAGE").value(), Convention::kHfV5_2);
  EXPECT_EQ(convention("family: QWEN2_VL convention: HF_V5_2").value(), Convention::kHfV5_2);
  EXPECT_EQ(convention("family: QWEN3_VL convention: HF_V5").value(), Convention::kHfV5);
  EXPECT_EQ(convention("family: QWEN2_5_VL convention: HF_V5_18").value(), Convention::kHfV5_18);
  EXPECT_EQ(convention("family: GLM4V convention: HF_V4").value(), Convention::kHfV4);
  EXPECT_THAT(std::string(convention("family: GLM46V convention: HF_V4").status().message()),
              HasSubstr("positions: the hf_v4 convention is not implemented for glm46v"));
}

// convention_release resolves a reference's release through the release table, as the CLI's
// --convention and Python's convention= do, with that release's video time rounding.
TEST(ProtoTest, ConventionByRelease) {
  const auto positions = [](const std::string& text) -> absl::StatusOr<ModelConfig> {
    v1::ModelParams params;
    EXPECT_TRUE(ParseTextproto("positions { " + text + " }", "test", params).ok());
    auto spec = ModelSpecFromProto(params);
    if (!spec.ok()) return spec.status();
    return spec->positions;
  };
  const auto v5_23 = positions("family: QWEN2_5_VL convention_release: 'transformers==5.23.0'");
  ASSERT_TRUE(v5_23.ok()) << v5_23.status();
  EXPECT_EQ(v5_23->convention, Convention::kHfV5_18);
  EXPECT_EQ(v5_23->video_time_rounding, VideoTimeRounding::kScaleThenTruncate);
  const auto v4 = positions("family: QWEN2_5_VL convention_release: 'transformers==4.57.6'");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->convention, Convention::kHfV4);
  EXPECT_EQ(v4->video_time_rounding, VideoTimeRounding::kTruncateIntervalFirst);
  EXPECT_EQ(positions("family: QWEN3_VL convention_release: 'vllm==0.33.0'")->convention,
            Convention::kVllm);
  EXPECT_THAT(
      std::string(positions("family: QWEN3_5 convention_release: 'transformers==5.24.0'")
                      .status()
                      .message()),
      HasSubstr("positions.convention_release: transformers 5.24.0 is not a release mrope has "
                "verified for qwen3_5"));
  EXPECT_THAT(std::string(positions("family: QWEN2_VL convention: VLLM "
                                    "convention_release: 'transformers==5.23.0'")
                              .status()
                              .message()),
              HasSubstr("positions.convention_release: set it or convention, not both"));
}

// Every family of the table is a proto enum value (its name in upper case).
TEST(ProtoTest, EveryFamilyHasAnEnumValue) {
  for (const ModelFamilyInfo& row : ModelFamilies()) {
    SCOPED_TRACE(row.name);
    v1::PositionParams::Family value;
    ASSERT_TRUE(v1::PositionParams::Family_Parse(absl::AsciiStrToUpper(row.name), &value));
    v1::ModelParams params;
    params.mutable_positions()->set_family(value);
    auto spec = ModelSpecFromProto(params);
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_EQ(FamilyOf(spec->positions).family, row.family);
  }
}

TEST(ProtoTest, ErrorsNameTheField) {
  v1::ModelParams params;
  auto spec = ModelSpecFromProto(params);
  EXPECT_THAT(std::string(spec.status().message()),
              HasSubstr("positions.family must be set to a model family"));

  params.mutable_positions()->set_family(v1::PositionParams::QWEN2_VL);
  params.mutable_positions()->set_spatial_merge_size(0);
  spec = ModelSpecFromProto(params);
  EXPECT_THAT(std::string(spec.status().message()),
              HasSubstr("positions: spatial_merge_size must be in [1, 64], got 0"));

  params.mutable_positions()->clear_spatial_merge_size();
  params.mutable_rope()->set_head_dim(128);
  spec = ModelSpecFromProto(params);
  EXPECT_THAT(std::string(spec.status().message()), HasSubstr("rope: "));
  EXPECT_THAT(std::string(spec.status().message()), HasSubstr("rope_theta"));
}

TEST(LoadModelSpecTest, PresetsFilesAndErrors) {
  auto preset = LoadModelSpec("qwen3_vl");
  ASSERT_TRUE(preset.ok()) << preset.status();
  EXPECT_EQ(FamilyOf(preset->positions).family, ModelFamily::kQwen3Vl);

  const std::string json_path = std::string(kConfigDir) + "Qwen3-VL-8B-Instruct.json";
  auto json = LoadModelSpec(json_path);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->name, json_path);

  const std::string checkpoint = std::string(std::getenv("TEST_TMPDIR")) + "/checkpoint";
  std::filesystem::create_directories(checkpoint);
  std::filesystem::copy_file(json_path, checkpoint + "/config.json",
                             std::filesystem::copy_options::overwrite_existing);
  auto directory = LoadModelSpec(checkpoint);
  ASSERT_TRUE(directory.ok()) << directory.status();
  EXPECT_EQ(FamilyOf(directory->positions).family, ModelFamily::kQwen3Vl);

  const std::string textproto_path = std::string(std::getenv("TEST_TMPDIR")) + "/model.textproto";
  std::ofstream(textproto_path) << "name: \"mine\"\npositions { family: QWEN3_OMNI }\n";
  auto textproto = LoadModelSpec(textproto_path);
  ASSERT_TRUE(textproto.ok()) << textproto.status();
  EXPECT_EQ(textproto->name, "mine");
  EXPECT_EQ(FamilyOf(textproto->positions).family, ModelFamily::kQwen3Omni);
  EXPECT_FALSE(textproto->rope.has_value());

  std::ofstream(textproto_path) << "positions { family: QWEN9 }\n";
  auto bad = LoadModelSpec(textproto_path);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("model.textproto:1:"));

  auto missing = LoadModelSpec("no/such/config.json");
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("'no/such/config.json' is neither a config file nor a preset"));
}

}  // namespace
}  // namespace mrope

namespace mrope {
namespace {

// GLM-4.1V pairs (2j, 2j+1) within its rotary dims; GLM-4.5V and the Qwen models use halves.
TEST(ModelSpecTest, RotaryLayoutFollowsTheFamily) {
  EXPECT_EQ(RotaryLayoutOf(LoadModelSpec("glm4v").value()), RotaryLayout::kGptj);
  EXPECT_EQ(RotaryLayoutOf(LoadModelSpec("glm4v_moe").value()), RotaryLayout::kNeox);
  EXPECT_EQ(RotaryLayoutOf(LoadModelSpec("qwen2_5_vl").value()), RotaryLayout::kNeox);
  EXPECT_EQ(RotaryLayoutOf(LoadModelSpec("qwen3_omni").value()), RotaryLayout::kNeox);
}

}  // namespace
}  // namespace mrope
