#include "mrope/model/model_family.h"

#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "mrope/model/conventions.h"

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
// ERNIE names its ids the same way (its markers are text: blocks come from the type ids).
std::vector<TokenKey> GlmKeys() {
  return {{"image", &SpecialTokens::image},
          {"video", &SpecialTokens::video},
          {"image_start", &SpecialTokens::vision_start},
          {"image_end", &SpecialTokens::vision_end},
          {"video_start", &SpecialTokens::video_start},
          {"video_end", &SpecialTokens::video_end}};
}

// image, video, vision_start, vision_end (GLM: image_start, image_end), and optionally GLM's
// video_start/video_end or an Omni model's audio ids.
SpecialTokens Tokens(int64_t image, int64_t video, int64_t start, int64_t end) {
  SpecialTokens t;
  t.image = image;
  t.video = video;
  t.vision_start = start;
  t.vision_end = end;
  return t;
}

// Token ids shared by every Qwen VL checkpoint, plus an Omni model's audio ids.
SpecialTokens QwenTokens(int64_t audio = -1, int64_t audio_start = -1, int64_t audio_end = -1) {
  SpecialTokens t = Tokens(151655, 151656, 151652, 151653);
  t.audio = audio;
  t.audio_start = audio_start;
  t.audio_end = audio_end;
  return t;
}

SpecialTokens GlmTokens(int64_t image, int64_t video, int64_t image_start, int64_t image_end,
                        int64_t video_start, int64_t video_end) {
  SpecialTokens t = Tokens(image, video, image_start, image_end);
  t.video_start = video_start;
  t.video_end = video_end;
  return t;
}

ModelFamilyInfo Row(ModelFamily family, absl::string_view name, absl::string_view checkpoint,
                    SpecialTokens tokens) {
  ModelFamilyInfo row;
  row.family = family;
  row.name = name;
  row.checkpoint = checkpoint;
  row.rules.name = name;
  row.rules.token_keys = QwenVisionKeys();
  row.preset.tokens = tokens;
  row.rope_index.hf = {"image_grid_thw", "video_grid_thw", "attention_mask"};  // most rows'
  return row;
}

// The families whose module returned every axis's cos/sin before transformers 5.17, for
// apply_multimodal_rotary_pos_emb to pick the sections from.
void PerAxisBefore5_17(ModelFamilyInfo& row) {
  row.rope.cos_layout_v4 = row.rope.cos_layout_v5 = CosSinLayout::kPerAxis;
}

// The conventions golden-checked for the transformers v4 Qwen-VL families.
std::vector<Convention> QwenVlConventions() {
  return {Convention::kHfV4, Convention::kHfV5_2, Convention::kHfV5, Convention::kVllm};
}

// A family new in transformers 5.x: its reference, and so its preset, is v5.2.0.
void NewInV5(ModelFamilyInfo& row) {
  row.rules.conventions = {Convention::kHfV5_2};
  row.preset.convention = Convention::kHfV5_2;
  row.rope.sections = SectionSource::kRotaryCode;
}

// The family's transformers >= 5.3 get_rope_index (hf_v5), run against the releases
// (mrope/model/conventions.cc): blocks from mm_token_type_ids, pads 0, the unpadded delta.
void From5_3(ModelFamilyInfo& row) {
  row.rules.conventions.push_back(Convention::kHfV5);
  row.rope_index.hf_v5 = {"mm_token_type_ids", "image_grid_thw", "video_grid_thw",
                          "attention_mask"};
}

// GLM-4.1V's rules (GLM-4.5V, GLM-4.6V and GLM-OCR run the same get_rope_index).
void GlmRules(ModelFamilyInfo& row) {
  row.rules.token_keys = GlmKeys();
  row.rules.policy.video_frames_as_blocks = true;
  row.rules.policy.video_marking = VideoMarking::kImageTokensInVideoBrackets;
  row.rules.v5_2_pad_value = 1;  // 5.2's Glm4vModel.get_rope_index fills padding with ones
  row.rules.v5_blocks_by_token_scan = true;
  row.processor = ProcessorLayout::kGlmVideoBrackets;
}

// What the Omni thinkers share: audio, scaled image time, the video_second_per_grid list, the
// unpadded delta, seconds_per_chunk 2 (Qwen2.5-Omni reads it), and their own get_rope_index
// and generate(). Their get_rope_index is v4.57.6's through 5.x (it reads no
// mm_token_type_ids). Their generate() decodes at cache position + delta up to 5.15.1
// (hf_v5_2); from 5.16.0 (PR #47872: compute_3d_position_ids, and
// _prepare_position_ids_for_generation, whose positions generate() grows) each axis from its
// own last value (hf_v5), found by running 5.15.1, 5.16.0 and the releases around them.
void OmniRules(ModelFamilyInfo& row) {
  row.rules.token_keys = OmniKeys();
  row.preset.seconds_per_chunk = 2;
  PositionPolicy& p = row.rules.policy;
  p.image_time = TimeIndex::kScaledFrame;
  p.seconds_list = SecondsList::kVideoSecondPerGrid;
  p.has_audio = true;
  p.delta_against_unpadded = true;
  row.rules.conventions_as = {
      {Convention::kHfV5_2, Convention::kHfV4, DecodeRule::kCachePlusDelta},
      {Convention::kHfV5, Convention::kHfV4, DecodeRule::kPerAxisFromLast}};
  row.rules.conventions = {Convention::kHfV4, Convention::kHfV5_2, Convention::kHfV5};
  row.processor = ProcessorLayout::kOmniAudio;
  row.rope_index.hf = {"image_grid_thw", "video_grid_thw", "attention_mask",
                       "use_audio_in_video", "audio_seqlens", "second_per_grids"};
}

// Qwen3-VL's rules: each video frame is a block of its own, after its timestamp text.
void Qwen3VlRules(ModelFamilyInfo& row) {
  row.rules.policy.video_frames_as_blocks = true;
  row.processor = ProcessorLayout::kFramesWithTimestamps;
}

// A family new in transformers 5.23.0 on Qwen3-VL's get_rope_index there (blocks from
// mm_token_type_ids): its preset follows that release (hf_v5), its rotary code decides the
// layout; `vllm` where vLLM runs Qwen3-VL's get_mrope_input_positions for it.
void Qwen3VlRulesNewInV5_23(ModelFamilyInfo& row, bool vllm) {
  Qwen3VlRules(row);
  row.rules.conventions = {Convention::kHfV5};
  if (vllm) row.rules.conventions.push_back(Convention::kVllm);
  row.preset.convention = Convention::kHfV5;
  row.rope.sections = SectionSource::kRotaryCode;
  row.rope_index.hf_v5 = {"mm_token_type_ids", "image_grid_thw", "video_grid_thw",
                          "attention_mask"};
}

// A family whose only reference is vLLM's get_mrope_input_positions: its preset follows vLLM,
// blocks are the runs of image and video tokens (vLLM reads no marker), `image` and `video`
// (-1: none) are read from config.json's image_token_id / video_token_id.
ModelFamilyInfo VllmRow(ModelFamily family, absl::string_view name, absl::string_view checkpoint,
                        int64_t image, int64_t video, bool ids_from_tokenizer) {
  ModelFamilyInfo r = Row(family, name, checkpoint, Tokens(image, video, -1, -1));
  r.hf_model_types = {{name, ""}};
  r.rules.token_keys = {{"image", &SpecialTokens::image, ids_from_tokenizer}};
  if (video >= 0) {
    r.rules.token_keys.push_back({"video", &SpecialTokens::video, ids_from_tokenizer});
  }
  r.rules.policy.blocks_from_media_runs = true;
  r.rules.conventions = {Convention::kVllm};
  r.preset.convention = Convention::kVllm;
  return r;
}

std::vector<ModelFamilyInfo> VllmOwnRuleRows() {
  std::vector<ModelFamilyInfo> rows;
  // openPangu-VL (OpenPanguVLForConditionalGeneration): Qwen3-VL's rule with the frames of a
  // video in one placeholder, two tokens (<vision_end><vision_start>) between frames. Ids,
  // theta 6.4e7 and merge 2: the remote OpenPanguVLConfig's defaults (openPangu-VL-7B); vLLM
  // reads config.image_token_id / video_token_id. Rotary: PanguEmbedded's (no q/k norm),
  // get_rope(head_dim, rope_parameters=config's), NeoX: config.json's mrope_section blocked
  // (MRotaryEmbedding); with mrope_interleaved, MRotaryEmbeddingInterleaved's own order
  // (kPanguInterleaved; vLLM then builds it unscaled whatever the rope_type).
  // vLLM 0.33.0 ships no config class or default for it (the checkpoint's remote code): the
  // preset's [16, 24, 24] is Qwen2.5-VL's, assumed.
  {
    ModelFamilyInfo r = VllmRow(ModelFamily::kOpenPanguVl, "openpangu_vl",
                                "FreedomIntelligence/openPangu-VL-7B (remote OpenPanguVLConfig "
                                "defaults)",
                                46005, 144208, /*ids_from_tokenizer=*/false);
    r.rope = {128, 6.4e7, {16, 24, 24}, MropeLayout::kBlocked, 1.0};
    r.rope.interleaved_layout = MropeLayout::kPanguInterleaved;
    r.rules.policy.video_frames_as_blocks = true;
    r.rules.policy.vllm_frame_separator_tokens = 2;
    r.processor = ProcessorLayout::kSeparatedFrames;
    rows.push_back(r);
  }
  // Isaac (IsaacForConditionalGeneration, vLLM's IsaacConfig): images only, h and w without
  // the block's start, the last text after the last image's t + 1. Its pad is the Qwen3
  // tokenizer's <|image_pad|> (vLLM encodes it; config.json has no id); merge is
  // vision_config.pixel_shuffle_scale_factor (class default 1); the text model is Qwen3's
  // (Qwen3Config defaults: head_dim 128, theta 1e4). IsaacForConditionalGeneration overwrites
  // mrope_section with [d // 4, d // 8, d // 8] of the top-level head_dim d (IsaacConfig's);
  // MRotaryEmbedding refuses d with d % 8 > 1 (they no longer sum to d / 2).
  {
    ModelFamilyInfo r = VllmRow(ModelFamily::kIsaac, "isaac", "IsaacConfig defaults (vLLM)",
                                151655, -1, /*ids_from_tokenizer=*/true);
    r.preset.spatial_merge_size = 1;
    r.spatial_merge_key = "pixel_shuffle_scale_factor";
    r.rope = {128, 1e4, {}, MropeLayout::kBlocked, 1.0};
    r.rope.sections = SectionSource::kHeadDim;
    r.rope.head_dim_divisors = {4, 8, 8};
    // The preset is IsaacConfig's defaults: its head_dim is Qwen3Config's field default, which
    // a config.json without head_dim gets (top level and text_config, both Qwen3Configs).
    r.rope.default_head_dim = r.rope.head_dim;
    r.rope.mrope_section = SectionsFromHeadDim(r.rope, r.rope.head_dim);
    r.rules.policy.spatial_from_zero = true;
    r.rules.policy.final_text_after_last_time = true;
    r.qk_norm = QkNorm::kWeight;
    r.processor = ProcessorLayout::kImageRuns;
    rows.push_back(r);
  }
  // Keye-VL (KeyeForConditionalGeneration, Kwai-Keye/Keye-VL-8B-Preview): a video is one
  // <vision_start> t*h*w/merge^2 pads <vision_end> whose frames are blocks back to back. Ids:
  // the Qwen3 tokenizer's (vLLM reads them from the vocabulary; config.json's image_token_id /
  // video_token_id when present); Qwen3-8B's text model (theta 1e6, q/k norm): Qwen3's
  // get_rope of config.json's rope_parameters (mrope_section blocked, Qwen3-VL's interleaving
  // with mrope_interleaved), NeoX. vLLM 0.33.0 ships no config class or default for it (the
  // checkpoint's remote code): the preset's [16, 24, 24] is Qwen2.5-VL's, assumed.
  {
    ModelFamilyInfo r = VllmRow(ModelFamily::kKeye, "keye", "Kwai-Keye/Keye-VL-8B-Preview",
                                151655, 151656, /*ids_from_tokenizer=*/true);
    r.rope = {128, 1e6, {16, 24, 24}, MropeLayout::kBlocked, 1.0};
    r.rules.policy.video_frames_stacked = true;
    r.qk_norm = QkNorm::kWeight;
    rows.push_back(r);
  }
  return rows;
}

std::vector<ModelFamilyInfo> BuildTable() {
  std::vector<ModelFamilyInfo> rows;
  {
    ModelFamilyInfo r = Row(ModelFamily::kQwen2Vl, "qwen2_vl", "Qwen/Qwen2-VL-7B-Instruct",
                            QwenTokens());
    r.hf_model_types = {{"qwen2_vl", ""}};
    r.rope = {128, 1e6, {16, 24, 24}, MropeLayout::kBlocked, 1.0};
    PerAxisBefore5_17(r);
    r.rules.conventions = QwenVlConventions();
    r.rules.v5_2_clamps_delta = true;
    r.rope_index.hf_v5 = {"mm_token_type_ids", "image_grid_thw", "video_grid_thw",
                          "attention_mask"};
    rows.push_back(r);
  }
  {
    ModelFamilyInfo r = Row(ModelFamily::kQwen2_5Vl, "qwen2_5_vl",
                            "Qwen/Qwen2.5-VL-7B-Instruct", QwenTokens());
    r.hf_model_types = {{"qwen2_5_vl", ""}};
    r.preset.tokens_per_second = 2;
    r.rope = {128, 1e6, {16, 24, 24}, MropeLayout::kBlocked, 1.0};
    PerAxisBefore5_17(r);
    r.rules.policy.image_time = TimeIndex::kZero;
    r.rules.policy.video_time = TimeIndex::kScaleThenTruncate;
    r.rules.policy.seconds_list = SecondsList::kSecondPerGridTs;
    r.rules.conventions = QwenVlConventions();
    r.rules.conventions.push_back(Convention::kHfV5_18);  // #48669's video time
    r.variants = {{"qwen2_5_vl_hf", VideoTimeRounding::kTruncateIntervalFirst,
                   Convention::kHfV4}};
    r.rope_index.hf = {"image_grid_thw", "video_grid_thw", "second_per_grid_ts",
                       "attention_mask"};
    r.rope_index.hf_v5 = {"mm_token_type_ids", "image_grid_thw", "video_grid_thw",
                          "second_per_grid_ts", "attention_mask"};
    rows.push_back(r);
  }
  {
    ModelFamilyInfo r = Row(ModelFamily::kQwen3Vl, "qwen3_vl", "Qwen/Qwen3-VL-8B-Instruct",
                            QwenTokens());
    r.hf_model_types = {{"qwen3_vl", ""}, {"qwen3_vl_moe", ""}};
    r.rope = {128, 5e6, {24, 20, 20}, MropeLayout::kInterleaved, 1.0};
    Qwen3VlRules(r);
    r.rules.conventions = QwenVlConventions();
    r.qk_norm = QkNorm::kWeight;
    r.rope_index.hf_v5 = {"mm_token_type_ids", "image_grid_thw", "video_grid_thw",
                          "attention_mask"};
    rows.push_back(r);
  }
  {
    ModelFamilyInfo r = Row(ModelFamily::kQwen2_5Omni, "qwen2_5_omni", "Qwen/Qwen2.5-Omni-7B",
                            QwenTokens(151646, 151647, 151648));
    r.hf_model_types = {{"qwen2_5_omni", "thinker_config"}, {"qwen2_5_omni_thinker", ""}};
    r.preset.position_id_per_seconds = 25;
    r.rope = {128, 1e6, {16, 24, 24}, MropeLayout::kBlocked, 1.0};
    PerAxisBefore5_17(r);
    OmniRules(r);
    PositionPolicy& p = r.rules.policy;
    p.video_time = TimeIndex::kSecondsTruncatedFloat32;
    p.audio_in_video = AudioInVideoOrder::kChunked;
    p.audio_in_video_shares_markers = true;
    p.audio_length = AudioLength::kStrideTwoTwice;
    rows.push_back(r);
  }
  {
    ModelFamilyInfo r = Row(ModelFamily::kQwen3Omni, "qwen3_omni",
                            "Qwen/Qwen3-Omni-30B-A3B-Instruct",
                            QwenTokens(151675, 151669, 151670));
    r.hf_model_types = {{"qwen3_omni_moe", "thinker_config"}, {"qwen3_omni_moe_thinker", ""}};
    r.preset.position_id_per_seconds = 13;
    r.rope = {128, 1e6, {24, 20, 20}, MropeLayout::kInterleaved, 1.0};
    OmniRules(r);
    PositionPolicy& p = r.rules.policy;
    p.video_time = TimeIndex::kSecondsFloat32;
    p.float_positions = true;
    p.audio_in_video = AudioInVideoOrder::kMergeByTime;
    p.audio_length = AudioLength::kPer100FrameChunks;
    p.pad_value = 0;  // torch.zeros (float) when the batch has a grid
    r.qk_norm = QkNorm::kWeight;
    r.processor = ProcessorLayout::kOmniAudio;
    rows.push_back(r);
  }
  // GLM-4.1V and GLM-4.5V: the same positions (their get_rope_index is one syntax tree) with
  // their own image/video ids; GLM-4.1V pairs (2j, 2j+1), GLM-4.5V rotates halves.
  for (const auto& [family, name, checkpoint, image, video, layout] :
       {std::make_tuple(ModelFamily::kGlm4v, "glm4v", "THUDM/GLM-4.1V-9B-Thinking", 151343,
                        151344, RotaryLayout::kGptj),
        std::make_tuple(ModelFamily::kGlm4vMoe, "glm4v_moe", "zai-org/GLM-4.5V", 151363,
                        151364, RotaryLayout::kNeox)}) {
    ModelFamilyInfo r = Row(family, name, checkpoint,
                            GlmTokens(image, video, 151339, 151340, 151341, 151342));
    r.hf_model_types = {{name, ""}};
    r.rope = {128, 1e4, {8, 12, 12}, MropeLayout::kBlocked, 0.5, layout};
    // v4.57.6's module gives every axis (the apply picks them); 5.x's applies the sections.
    r.rope.cos_layout_v4 = CosSinLayout::kPerAxis;
    GlmRules(r);
    r.rules.conventions = {Convention::kHfV4, Convention::kHfV5_2};
    if (family == ModelFamily::kGlm4v) From5_3(r);  // GLM-4.5V's releases are not run
    rows.push_back(r);
  }
  // Qwen3.5 (dense and MoE): Qwen3-VL's code at v5.2.0 with new ids, a quarter of the head
  // rotated and a (1 + w) q/k norm.
  for (const auto& [family, name, checkpoint] :
       {std::make_tuple(ModelFamily::kQwen3_5, "qwen3_5", "Qwen3_5Config defaults"),
        std::make_tuple(ModelFamily::kQwen3_5Moe, "qwen3_5_moe", "Qwen3_5MoeConfig defaults")}) {
    ModelFamilyInfo r = Row(family, name, checkpoint, Tokens(248056, 248057, 248053, 248054));
    r.hf_model_types = {{name, ""}};
    r.rope = {256, 1e4, {11, 11, 10}, MropeLayout::kInterleaved, 0.25};
    Qwen3VlRules(r);
    NewInV5(r);
    From5_3(r);  // Qwen3.5-MoE: its 5.23.0 get_rope_index is Qwen3.5's (live tests)
    r.qk_norm = QkNorm::kOnePlusWeight;
    rows.push_back(r);
  }
  // GLM-4.6V and GLM-OCR: GLM-4.1V's code at v5.2.0 with their own ids and rotary.
  for (const auto& [family, name, checkpoint, tokens, rope] :
       {std::make_tuple(ModelFamily::kGlm46v, "glm46v", "Glm46VConfig defaults",
                        GlmTokens(151343, 151344, 151339, 151340, 151361, 151362),
                        RopePreset{128, 1e4, {8, 12, 12}, MropeLayout::kBlocked, 0.5,
                                   RotaryLayout::kGptj}),
        std::make_tuple(ModelFamily::kGlmOcr, "glm_ocr", "GlmOcrConfig defaults",
                        GlmTokens(59280, 59281, 59256, 59257, 59258, 59259),
                        RopePreset{64, 1e4, {8, 12, 12}, MropeLayout::kBlocked, 1.0,
                                   RotaryLayout::kGptj})}) {
    ModelFamilyInfo r = Row(family, name, checkpoint, tokens);
    r.hf_model_types = {{name, ""}};
    r.rope = rope;
    GlmRules(r);
    NewInV5(r);
    if (family == ModelFamily::kGlm46v) From5_3(r);  // GLM-OCR's releases are not run
    rows.push_back(r);
  }
  // PaddleOCR-VL: Qwen2-VL's code at v5.2.0 (padding 0, delta clamped at 0); a flat config.
  {
    ModelFamilyInfo r = Row(ModelFamily::kPaddleOcrVl, "paddleocr_vl", "PaddleOCRVLConfig defaults",
                            Tokens(100295, 100296, 101305, 101306));
    r.hf_model_types = {{"paddleocr_vl", ""}};
    r.rope = {128, 5e5, {16, 24, 24}, MropeLayout::kBlocked, 1.0};
    PerAxisBefore5_17(r);  // Qwen2-VL's module
    r.rules.v5_2_clamps_delta = true;
    NewInV5(r);
    From5_3(r);
    r.rope.sections = SectionSource::kConfigRequired;  // HF's attention fails without it
    rows.push_back(r);
  }
  // ERNIE-4.5-VL: blocks are the runs of mm_token_type_ids (its start/end ids are text); a
  // video's t is merged by temporal_merge_size 2; padding 1 and no clamp.
  {
    ModelFamilyInfo r = Row(ModelFamily::kErnie4_5VlMoe, "ernie4_5_vl_moe",
                            "Ernie4_5_VL_MoeConfig defaults",
                            GlmTokens(100295, 103367, 101304, 101305, 101306, 101307));
    r.hf_model_types = {{"ernie4_5_vl_moe", ""}};
    r.rules.token_keys = GlmKeys();
    r.rules.policy.blocks_from_type_ids = true;
    r.rules.v5_2_pad_value = 1;
    r.preset.temporal_merge_size = 2;
    // Its mrope_section [22, 22, 20] counts [h, w, t]: h and w alternate over pairs 0..43, t
    // takes the rest; pairs (2j, 2j+1); cos/sin repeat each pair's value (repeat_interleave).
    r.rope = {128, 5e5, {22, 22, 20}, MropeLayout::kHwAlternatingThenT, 1.0, RotaryLayout::kGptj};
    r.rope.cos_layout_v4 = r.rope.cos_layout_v5 = CosSinLayout::kRepeatInterleave;
    r.processor = ProcessorLayout::kTypedRuns;
    NewInV5(r);
    From5_3(r);
    r.rope_index.hf = {"image_grid_thw", "video_grid_thw", "attention_mask",
                       "mm_token_type_ids"};
    rows.push_back(r);
  }
  // GLM-Image: source images take (cp, cp + i, cp + j), text resumes at cp + max(h, w) (no
  // spatial merge); decode follows the table of its generation targets; deltas are 0.
  {
    ModelFamilyInfo r = Row(ModelFamily::kGlmImage, "glm_image", "GlmImageConfig defaults",
                            Tokens(167855, -1, 16384, 16385));
    r.hf_model_types = {{"glm_image", ""}};
    r.rules.token_keys = {{"image", &SpecialTokens::image},
                          {"image_start", &SpecialTokens::vision_start},
                          {"image_end", &SpecialTokens::vision_end}};
    PositionPolicy& p = r.rules.policy;
    p.blocks_from_media_runs = true;
    p.block_end = BlockEnd::kStartPlusLargerSide;
    p.decode = DecodeRule::kTargetGridTable;
    p.zero_deltas = true;
    r.rules.v5_2_pad_value = 1;
    r.preset.spatial_merge_size = 1;
    // GlmImageTextAttention's apply is built on rotate_half: NeoX halves, unlike GLM-4.6V.
    r.rope = {128, 1e4, {8, 12, 12}, MropeLayout::kBlocked, 0.5, RotaryLayout::kNeox};
    r.processor = ProcessorLayout::kImageGenerationTargets;
    NewInV5(r);
    r.rope_index.hf = {"image_grid_thw", "images_per_sample", "attention_mask"};
    rows.push_back(r);
  }
  // Qwen4-Exp: Qwen3.5-MoE's position code and attention in transformers 5.23.0 (not in vLLM
  // 0.33.0); the class leaves partial_rotary_factor at 1.0, the checkpoint's config.json gives
  // Qwen3.5's 0.25.
  {
    ModelFamilyInfo r = Row(ModelFamily::kQwen4Exp, "qwen4_exp",
                            "Qwen4ExpConfig defaults, partial_rotary_factor 0.25 (Qwen/Qwen4-Exp)",
                            Tokens(248056, 248057, 248053, 248054));
    r.hf_model_types = {{"qwen4_exp", ""}};
    r.rope = {256, 1e4, {11, 11, 10}, MropeLayout::kInterleaved, 0.25};
    Qwen3VlRulesNewInV5_23(r, /*vllm=*/false);
    r.qk_norm = QkNorm::kOnePlusWeight;
    rows.push_back(r);
  }
  // Cosmos3-Omni (Qwen3-VL's text model) and Cosmos3-Edge (its own, without q/k norm); in vLLM
  // 0.33.0 Cosmos3ForConditionalGeneration and Cosmos3EdgeForConditionalGeneration. Both rotary
  // modules interleave, [24, 20, 20] by default.
  for (const auto& [family, name, checkpoint, tokens, theta, qk_norm] :
       {std::make_tuple(ModelFamily::kCosmos3Omni, "cosmos3_omni", "Cosmos3OmniConfig defaults",
                        QwenTokens(), 5e5, QkNorm::kWeight),
        std::make_tuple(ModelFamily::kCosmos3Edge, "cosmos3_edge", "Cosmos3EdgeConfig defaults",
                        Tokens(19, 18, 20, 21), 1e8, QkNorm::kNone)}) {
    ModelFamilyInfo r = Row(family, name, checkpoint, tokens);
    r.hf_model_types = {{name, ""}};
    r.rope = {128, theta, {24, 20, 20}, MropeLayout::kInterleaved, 1.0};
    Qwen3VlRulesNewInV5_23(r, /*vllm=*/true);
    r.qk_norm = qk_norm;
    rows.push_back(r);
  }
  // The families on rules of their own whose only reference is vLLM 0.33.0's
  // get_mrope_input_positions (their configs are the checkpoints' remote code, Isaac's vLLM's
  // own): vLLM presets; blocks are the runs of image and video tokens, as vLLM reads no marker.
  for (ModelFamilyInfo r : VllmOwnRuleRows()) rows.push_back(r);
  // Cohere Compass: Qwen3-VL's positions (vLLM 0.33.0: its own code, images only) and a rotary
  // per layer type (Cohere2's sliding / full attention, NoPE allowed), interleaved [24, 20, 20].
  // The class sets no rope_parameters: the preset takes Cohere2's layer pattern and theta.
  {
    ModelFamilyInfo r = Row(ModelFamily::kCohereCompass, "cohere_compass",
                            "CohereCompassConfig defaults; layers and rotary Cohere2's (every 4th "
                            "layer full attention, NoPE; sliding ones theta 1e4)",
                            Tokens(255031, 255032, 255028, 255029));
    r.hf_model_types = {{"cohere_compass", ""}};
    r.rope = {128, 1e4, {24, 20, 20}, MropeLayout::kInterleaved, 1.0};
    Qwen3VlRulesNewInV5_23(r, /*vllm=*/true);
    r.rules.vllm_images_only = true;
    for (int layer = 1; layer <= 40; ++layer) {
      r.preset_layer_types.push_back(layer % 4 ? "sliding_attention" : "full_attention");
    }
    r.preset_nope_layer_types = {"full_attention"};
    rows.push_back(r);
  }
  // HunYuan-VL / HunyuanOCR: XD-RoPE over len(mrope_section) axes (the checkpoint's
  // xdrope_section [16, 16, 16, 16]), HunYuanVLModel.get_rope_index of transformers 5.23.0 (its
  // first release: hf_v5); vLLM 0.33.0 has no HunYuan-VL. Its image runs are found from
  // mm_token_type_ids (the begin and end ids are the processor's, read by no position rule).
  // Its rotary module gives each element of a pair the axis of its section block (kXd), reads
  // alpha (NTK) and applies the q/k norm after the rotation.
  {
    ModelFamilyInfo r = Row(ModelFamily::kHunyuanVl, "hunyuan_vl",
                            "HunYuanVLConfig defaults, xdrope_section [16, 16, 16, 16] "
                            "(tencent/HunyuanOCR)",
                            Tokens(120120, -1, -1, -1));
    r.hf_model_types = {{"hunyuan_vl", ""}};
    r.rules.token_keys = {{"image", &SpecialTokens::image}};
    r.rules.policy.scheme = PositionScheme::kSequentialGrid;
    r.rules.conventions = {Convention::kHfV5};
    r.preset.convention = Convention::kHfV5;
    r.preset.num_axes = 4;
    r.rope = {128, 1e4, {16, 16, 16, 16}, MropeLayout::kXd, 1.0};
    r.rope.sections = SectionSource::kRotaryCode;
    r.rope.ntk_alpha = true;
    r.qk_norm = QkNorm::kWeightAfterRotary;
    r.processor = ProcessorLayout::kImageGridRows;
    r.rope_index.hf = r.rope_index.hf_v5 = {"mm_token_type_ids", "image_grid_thw",
                                            "attention_mask"};
    rows.push_back(r);
  }
  // Every other convention of a row is a preset "<name>_<convention>", with the convention's
  // reference video time rounding (transformers before 5.18 truncates the interval first).
  for (ModelFamilyInfo& r : rows) {
    for (const Convention convention : r.rules.conventions) {
      if (convention == r.preset.convention) continue;
      const ConventionRules& rules = ConventionRulesOf(convention);
      r.variants.push_back({absl::StrCat(r.name, "_", rules.name), rules.reference_video_time,
                            convention});
    }
  }
  return rows;
}

std::vector<ModelFamilyInfo>* NewTable() {
  auto* table = new std::vector<ModelFamilyInfo>(BuildTable());
  // In place, once the vector no longer moves: each preset points at its row's rules.
  for (ModelFamilyInfo& row : *table) row.preset.rules = &row.rules;
  return table;
}

}  // namespace

std::vector<int32_t> SectionsFromHeadDim(const RopePreset& rope, int64_t head_dim) {
  std::vector<int32_t> sections;
  for (const int32_t divisor : rope.head_dim_divisors) {
    sections.push_back(static_cast<int32_t>(head_dim / divisor));
  }
  return sections;
}

const std::vector<ModelFamilyInfo>& ModelFamilies() {
  static const std::vector<ModelFamilyInfo>* const kTable = NewTable();
  return *kTable;
}

const ModelFamilyInfo& FamilyInfo(ModelFamily family) {
  return ModelFamilies()[static_cast<size_t>(family)];
}

CosSinLayout HfCosSinLayout(const ModelFamilyInfo& row, TransformersRelease release) {
  if (release.major < 5) return row.rope.cos_layout_v4;
  if (release.major == kRotaryModuleAppliesSections.major &&
      release.minor < kRotaryModuleAppliesSections.minor) {
    return row.rope.cos_layout_v5;
  }
  return row.rope.layout == RotaryLayout::kGptj ? CosSinLayout::kRepeatInterleave
                                                : CosSinLayout::kCat;
}

absl::StatusOr<std::vector<int64_t>> ParseRelease(absl::string_view version) {
  std::vector<int64_t> numbers;
  for (absl::string_view part : absl::StrSplit(version, '.')) {
    const size_t digits = std::min(part.find_first_not_of("0123456789"), part.size());
    int64_t number = 0;
    if (digits == 0 || !absl::SimpleAtoi(part.substr(0, digits), &number)) break;
    numbers.push_back(number);
    if (digits < part.size()) break;  // "0rc1", "0+cu130": the suffix ends the numbers
  }
  if (numbers.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a release such as '5.23.0', got '", version, "'"));
  }
  return numbers;
}

absl::StatusOr<TransformersRelease> ParseTransformersRelease(absl::string_view version) {
  absl::StatusOr<std::vector<int64_t>> numbers = ParseRelease(version);
  if (!numbers.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("transformers: ", numbers.status().message()));
  }
  return TransformersRelease{static_cast<int>((*numbers)[0]), static_cast<int>((*numbers)[1])};
}

const std::vector<absl::string_view>& RopeIndexArguments(ModelFamily family,
                                                         Convention convention) {
  const RopeIndexSignature& signature = FamilyInfo(family).rope_index;
  // The 5.3+ get_rope_index takes mm_token_type_ids first.
  return ConventionRulesOf(convention).blocks_from_type_ids && !signature.hf_v5.empty()
             ? signature.hf_v5
             : signature.hf;
}

const ModelFamilyInfo& FamilyOf(const ModelConfig& config) {
  for (const ModelFamilyInfo& row : ModelFamilies()) {
    if (&row.rules == config.rules) return row;
  }
  return ModelFamilies().front();  // unreachable for configs built from the table
}

const ModelFamilyInfo* FamilyForModelType(absl::string_view model_type) {
  for (const ModelFamilyInfo& row : ModelFamilies()) {
    for (const HfModelType& type : row.hf_model_types) {
      if (type.model_type == model_type) return &row;
    }
  }
  return nullptr;
}

absl::StatusOr<ModelFamily> ParseModelFamily(absl::string_view name) {
  for (const ModelFamilyInfo& row : ModelFamilies()) {
    if (row.name == name) return row.family;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown model family '", name,
                                                 "'; known: ", absl::StrJoin(FamilyNames(), ", ")));
}

absl::string_view ModelFamilyName(ModelFamily family) { return FamilyInfo(family).name; }

absl::string_view ProcessorLayoutText(ProcessorLayout layout) {
  switch (layout) {
    case ProcessorLayout::kVisionBlocks:
      return "<vision_start> t*h*w/merge^2 pads <vision_end> per image and video";
    case ProcessorLayout::kFramesWithTimestamps:
      return "images as blocks; a video as, per temporal grid, its timestamp text then "
             "<vision_start> h*w/merge^2 pads <vision_end>";
    case ProcessorLayout::kOmniAudio:
      return "vision blocks, <audio_start> audio <audio_end>, and audio-in-video blocks";
    case ProcessorLayout::kGlmVideoBrackets:
      return "<|begin_of_image|> image tokens <|end_of_image|> per image; a video as "
             "<|begin_of_video|>, per frame an image block and its timestamp text, "
             "<|end_of_video|>";
    case ProcessorLayout::kTypedRuns:
      return "blocks are the runs of mm_token_type_ids; start and end ids are text";
    case ProcessorLayout::kImageGridRows:
      return "<image_start>, a run of image tokens: begin, h/merge rows of w/merge tokens and a "
             "row separator, end; then <image_end>";
    case ProcessorLayout::kImageGenerationTargets:
      return "<image_start> h*w image tokens <image_end> per source image; generation targets "
             "are the row's image_grid_thw entries past them (images_per_sample)";
    case ProcessorLayout::kImageRuns:
      return "h*w/merge^2 image tokens per image, no markers: each run of image tokens is a block";
    case ProcessorLayout::kSeparatedFrames:
      return "<vision_start> image tokens <vision_end> per image; a video as <vision_start>, its "
             "frames' video tokens with <vision_end><vision_start> between frames, <vision_end>";
  }
  return "";
}

absl::string_view QkNormName(QkNorm norm) {
  switch (norm) {
    case QkNorm::kNone:
      return "none";
    case QkNorm::kWeight:
      return "weight";
    case QkNorm::kOnePlusWeight:
      return "one_plus_weight";
    case QkNorm::kWeightAfterRotary:
      return "weight_after_rotary";
  }
  return "";
}

absl::StatusOr<Convention> ParseConvention(absl::string_view name) {
  if (name == "hf") return Convention::kHfV4;
  std::vector<absl::string_view> names;
  for (const Convention c : AllConventions()) {
    if (ConventionReleaseName(c) == name || ConventionName(c) == name) return c;
    names.push_back(ConventionReleaseName(c));
  }
  for (const Convention c : AllConventions()) names.push_back(ConventionName(c));
  names.push_back("hf");
  return absl::InvalidArgumentError(absl::StrCat("unknown convention '", name, "'; known: ",
                                                 absl::StrJoin(names, ", ")));
}

const std::vector<Convention>& AllConventions() {
  static const std::vector<Convention>* const kAll =
      new std::vector<Convention>{Convention::kHfV4, Convention::kHfV5_2, Convention::kHfV5,
                                  Convention::kHfV5_18, Convention::kVllm};
  return *kAll;
}

absl::string_view ConventionName(Convention convention) {
  return ConventionRulesOf(convention).name;
}

absl::StatusOr<ModelConfig> PresetConfig(absl::string_view name) {
  for (const ModelFamilyInfo& row : ModelFamilies()) {
    if (row.name == name) return row.preset;
    for (const PresetVariant& variant : row.variants) {
      if (variant.name != name) continue;
      ModelConfig config = row.preset;
      config.video_time_rounding = variant.video_time_rounding;
      config.convention = variant.convention;
      return config;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown preset '", name, "'; known: ",
                                                 absl::StrJoin(PresetNames(), ", ")));
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
