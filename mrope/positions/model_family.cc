#include "mrope/positions/model_family.h"

#include <string>
#include <tuple>
#include <vector>

namespace mrope {
namespace {

std::vector<TokenKey> QwenVisionKeys() {
  return {{"image", &SpecialTokens::image},
          {"video", &SpecialTokens::video},
          {"vision_start", &SpecialTokens::vision_start},
          {"vision_end", &SpecialTokens::vision_end}};
}

std::vector<TokenKey> OmniKeys() {
  std::vector<TokenKey> keys = QwenVisionKeys();
  keys.insert(keys.end(), {{"audio", &SpecialTokens::audio},
                           {"audio_start", &SpecialTokens::audio_start},
                           {"audio_end", &SpecialTokens::audio_end}});
  return keys;
}

// GLM's image_start/image_end bracket every image and every video frame: mrope's vision markers.
std::vector<TokenKey> GlmKeys() {
  return {{"image", &SpecialTokens::image},
          {"video", &SpecialTokens::video},
          {"image_start", &SpecialTokens::vision_start},
          {"image_end", &SpecialTokens::vision_end},
          {"video_start", &SpecialTokens::video_start},
          {"video_end", &SpecialTokens::video_end}};
}

// Token ids shared by every Qwen VL checkpoint, plus an Omni model's audio ids.
SpecialTokens QwenTokens(int64_t audio = -1, int64_t audio_start = -1, int64_t audio_end = -1) {
  SpecialTokens t;
  t.image = 151655;
  t.video = 151656;
  t.vision_start = 151652;
  t.vision_end = 151653;
  t.audio = audio;
  t.audio_start = audio_start;
  t.audio_end = audio_end;
  return t;
}

// GLM-4.1V and GLM-4.5V share their start/end ids; their image and video ids differ.
SpecialTokens GlmTokens(int64_t image, int64_t video) {
  SpecialTokens t;
  t.image = image;
  t.video = video;
  t.vision_start = 151339;
  t.vision_end = 151340;
  t.video_start = 151341;
  t.video_end = 151342;
  return t;
}

ModelFamilyInfo Row(ModelFamily family, absl::string_view name, absl::string_view checkpoint,
                    SpecialTokens tokens) {
  ModelFamilyInfo row;
  row.family = family;
  row.name = name;
  row.checkpoint = checkpoint;
  row.preset.family = family;
  row.preset.tokens = tokens;
  row.token_keys = QwenVisionKeys();
  return row;
}

std::vector<ModelFamilyInfo> BuildTable() {
  std::vector<ModelFamilyInfo> rows;
  {
    ModelFamilyInfo r = Row(ModelFamily::kQwen2Vl, "qwen2_vl", "Qwen/Qwen2-VL-7B-Instruct",
                            QwenTokens());
    r.hf_model_types = {{"qwen2_vl", ""}};
    r.rope = {128, 1e6, {16, 24, 24}, false, 1.0};
    r.supports_vllm = true;
    rows.push_back(r);
  }
  {
    ModelFamilyInfo r = Row(ModelFamily::kQwen2_5Vl, "qwen2_5_vl",
                            "Qwen/Qwen2.5-VL-7B-Instruct", QwenTokens());
    r.hf_model_types = {{"qwen2_5_vl", ""}};
    r.preset.tokens_per_second = 2;
    r.rope = {128, 1e6, {16, 24, 24}, false, 1.0};
    r.policy.image_time = TimeIndex::kZero;
    r.policy.video_time = TimeIndex::kScaleThenTruncate;
    r.policy.seconds_list = SecondsList::kSecondPerGridTs;
    r.supports_vllm = true;
    r.variants = {
        {"qwen2_5_vl_hf", VideoTimeRounding::kTruncateIntervalFirst, Convention::kHfTransformers},
        {"qwen2_5_vl_vllm", VideoTimeRounding::kScaleThenTruncate, Convention::kVllm}};
    rows.push_back(r);
  }
  {
    ModelFamilyInfo r = Row(ModelFamily::kQwen3Vl, "qwen3_vl", "Qwen/Qwen3-VL-8B-Instruct",
                            QwenTokens());
    r.hf_model_types = {{"qwen3_vl", ""}, {"qwen3_vl_moe", ""}};
    r.rope = {128, 5e6, {24, 20, 20}, true, 1.0};
    r.policy.video_frames_as_blocks = true;
    r.supports_vllm = true;
    rows.push_back(r);
  }
  {
    ModelFamilyInfo r = Row(ModelFamily::kQwen2_5Omni, "qwen2_5_omni", "Qwen/Qwen2.5-Omni-7B",
                            QwenTokens(151646, 151647, 151648));
    r.hf_model_types = {{"qwen2_5_omni", "thinker_config"}, {"qwen2_5_omni_thinker", ""}};
    r.token_keys = OmniKeys();
    r.preset.position_id_per_seconds = 25;
    r.preset.seconds_per_chunk = 2;
    r.rope = {128, 1e6, {16, 24, 24}, false, 1.0};
    r.policy.image_time = TimeIndex::kScaledFrame;
    r.policy.video_time = TimeIndex::kSecondsTruncatedFloat32;
    r.policy.seconds_list = SecondsList::kVideoSecondPerGrid;
    r.policy.has_audio = true;
    r.policy.audio_in_video = AudioInVideoOrder::kChunked;
    r.policy.audio_in_video_shares_markers = true;
    r.policy.audio_length = AudioLength::kStrideTwoTwice;
    r.policy.delta_against_unpadded = true;
    rows.push_back(r);
  }
  {
    ModelFamilyInfo r = Row(ModelFamily::kQwen3Omni, "qwen3_omni",
                            "Qwen/Qwen3-Omni-30B-A3B-Instruct",
                            QwenTokens(151675, 151669, 151670));
    r.hf_model_types = {{"qwen3_omni_moe", "thinker_config"}, {"qwen3_omni_moe_thinker", ""}};
    r.token_keys = OmniKeys();
    r.preset.position_id_per_seconds = 13;
    r.preset.seconds_per_chunk = 2;
    r.rope = {128, 1e6, {24, 20, 20}, true, 1.0};
    r.policy.image_time = TimeIndex::kScaledFrame;
    r.policy.video_time = TimeIndex::kSecondsFloat32;
    r.policy.seconds_list = SecondsList::kVideoSecondPerGrid;
    r.policy.float_positions = true;
    r.policy.has_audio = true;
    r.policy.audio_in_video = AudioInVideoOrder::kMergeByTime;
    r.policy.audio_length = AudioLength::kPer100FrameChunks;
    r.policy.delta_against_unpadded = true;
    rows.push_back(r);
  }
  // GLM-4.1V and GLM-4.5V: the same positions (their get_rope_index is one syntax tree) with
  // their own image/video ids; GLM-4.1V pairs (2j, 2j+1), GLM-4.5V rotates halves.
  for (const auto& [family, name, checkpoint, image, video, layout] :
       {std::make_tuple(ModelFamily::kGlm4v, "glm4v", "THUDM/GLM-4.1V-9B-Thinking", 151343,
                        151344, RotaryLayout::kGptj),
        std::make_tuple(ModelFamily::kGlm4vMoe, "glm4v_moe", "zai-org/GLM-4.5V", 151363,
                        151364, RotaryLayout::kNeox)}) {
    ModelFamilyInfo r = Row(family, name, checkpoint, GlmTokens(image, video));
    r.hf_model_types = {{name, ""}};
    r.token_keys = GlmKeys();
    r.rope = {128, 1e4, {8, 12, 12}, false, 0.5, layout};
    r.policy.video_frames_as_blocks = true;
    r.policy.video_marking = VideoMarking::kImageTokensInVideoBrackets;
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

const std::vector<ModelFamilyInfo>& ModelFamilies() {
  static const auto* const kTable = new std::vector<ModelFamilyInfo>(BuildTable());
  return *kTable;
}

const ModelFamilyInfo& FamilyInfo(ModelFamily family) {
  return ModelFamilies()[static_cast<size_t>(family)];
}

const ModelFamilyInfo* FamilyForModelType(absl::string_view model_type) {
  for (const ModelFamilyInfo& row : ModelFamilies()) {
    for (const HfModelType& type : row.hf_model_types) {
      if (type.model_type == model_type) return &row;
    }
  }
  return nullptr;
}

absl::string_view TokenName(ModelFamily family, int64_t SpecialTokens::*field) {
  for (const TokenKey& key : FamilyInfo(family).token_keys) {
    if (key.field == field) return key.hf_name;
  }
  return "token";  // a field the family does not read
}

std::vector<std::string> FamilyNames() {
  std::vector<std::string> names;
  for (const ModelFamilyInfo& row : ModelFamilies()) names.emplace_back(row.name);
  return names;
}

std::vector<std::string> PresetNames() {
  std::vector<std::string> names;
  for (const ModelFamilyInfo& row : ModelFamilies()) {
    names.emplace_back(row.name);
    for (const PresetVariant& variant : row.variants) names.emplace_back(variant.name);
  }
  return names;
}

}  // namespace mrope
