#include "mrope/positions/model_config.h"

#include <cmath>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace mrope {
namespace {

struct FamilyName {
  ModelFamily family;
  absl::string_view name;
};

constexpr FamilyName kFamilyNames[] = {
    {ModelFamily::kQwen2Vl, "qwen2_vl"},
    {ModelFamily::kQwen2_5Vl, "qwen2_5_vl"},
    {ModelFamily::kQwen3Vl, "qwen3_vl"},
    {ModelFamily::kQwen2_5Omni, "qwen2_5_omni"},
    {ModelFamily::kQwen3Omni, "qwen3_omni"},
};

bool IsOmni(ModelFamily family) {
  return family == ModelFamily::kQwen2_5Omni || family == ModelFamily::kQwen3Omni;
}

// Python's floor division, which HF's audio-length formulas use (differs from C++ for < 0).
int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Token ids shared by every Qwen VL checkpoint.
SpecialTokens QwenVisionTokens() {
  SpecialTokens t;
  t.image = 151655;
  t.video = 151656;
  t.vision_start = 151652;
  t.vision_end = 151653;
  return t;
}

}  // namespace

absl::StatusOr<ModelFamily> ParseModelFamily(absl::string_view name) {
  for (const auto& entry : kFamilyNames) {
    if (entry.name == name) return entry.family;
  }
  std::vector<std::string> known;
  for (const auto& entry : kFamilyNames) known.emplace_back(entry.name);
  return absl::InvalidArgumentError(absl::StrCat("unknown model family '", name,
                                                 "'; known: ", absl::StrJoin(known, ", ")));
}

absl::string_view ModelFamilyName(ModelFamily family) {
  for (const auto& entry : kFamilyNames) {
    if (entry.family == family) return entry.name;
  }
  return "unknown";
}

absl::StatusOr<ModelConfig> PresetConfig(absl::string_view name) {
  ModelConfig config;
  config.tokens = QwenVisionTokens();
  if (name == "qwen2_vl") {
    config.family = ModelFamily::kQwen2Vl;
  } else if (name == "qwen2_5_vl" || name == "qwen2_5_vl_hf" || name == "qwen2_5_vl_vllm") {
    config.family = ModelFamily::kQwen2_5Vl;
    config.tokens_per_second = 2;
    if (name == "qwen2_5_vl_hf") {
      config.video_time_rounding = VideoTimeRounding::kTruncateIntervalFirst;
    }
    if (name == "qwen2_5_vl_vllm") config.convention = Convention::kVllm;
  } else if (name == "qwen3_vl") {
    config.family = ModelFamily::kQwen3Vl;
  } else if (name == "qwen2_5_omni") {
    config.family = ModelFamily::kQwen2_5Omni;
    config.tokens.audio = 151646;
    config.tokens.audio_start = 151647;
    config.tokens.audio_end = 151648;
    config.position_id_per_seconds = 25;
    config.seconds_per_chunk = 2;
  } else if (name == "qwen3_omni") {
    config.family = ModelFamily::kQwen3Omni;
    config.tokens.audio = 151675;
    config.tokens.audio_start = 151669;
    config.tokens.audio_end = 151670;
    config.position_id_per_seconds = 13;
    config.seconds_per_chunk = 2;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown preset '", name,
        "'; known: qwen2_vl, qwen2_5_vl, qwen2_5_vl_hf, qwen2_5_vl_vllm, qwen3_vl, "
        "qwen2_5_omni, qwen3_omni"));
  }
  return config;
}

absl::Status ValidateModelConfig(const ModelConfig& config) {
  if (config.spatial_merge_size < 1 || config.spatial_merge_size > 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spatial_merge_size must be in [1, 64], got ", config.spatial_merge_size));
  }
  // Bounded above so that no time index is infinite or NaN on the way to the max_position
  // check (hardening: Qwen3-Omni with position_id_per_seconds 1e300, inf in float32, wrote NaN
  // positions, as frame 0's time is 0 * inf).
  const auto in_range = [](double x) { return x > 0 && x <= kMaxTimeScale; };
  if (!in_range(config.tokens_per_second)) {
    return absl::InvalidArgumentError(
        absl::StrCat("tokens_per_second must be in (0, ", kMaxTimeScale, "], got ",
                     config.tokens_per_second));
  }
  if (!in_range(config.position_id_per_seconds)) {
    return absl::InvalidArgumentError(
        absl::StrCat("position_id_per_seconds must be in (0, ", kMaxTimeScale, "], got ",
                     config.position_id_per_seconds));
  }
  if (!in_range(config.seconds_per_chunk) ||
      config.position_id_per_seconds * config.seconds_per_chunk < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "seconds_per_chunk must be in (0, ", kMaxTimeScale,
        "] and give at least one position per chunk, got ", config.seconds_per_chunk));
  }
  if (config.convention == Convention::kVllm && config.family != ModelFamily::kQwen2_5Vl &&
      config.family != ModelFamily::kQwen2Vl && config.family != ModelFamily::kQwen3Vl) {
    return absl::InvalidArgumentError(
        absl::StrCat("the vLLM convention is implemented for the VL families, not ",
                     ModelFamilyName(config.family)));
  }
  std::vector<std::pair<absl::string_view, int64_t>> ids = {
      {"image_token_id", config.tokens.image},
      {"video_token_id", config.tokens.video},
      {"vision_start_token_id", config.tokens.vision_start},
      {"vision_end_token_id", config.tokens.vision_end}};
  if (IsOmni(config.family)) {
    ids.insert(ids.end(), {{"audio_token_id", config.tokens.audio},
                           {"audio_start_token_id", config.tokens.audio_start},
                           {"audio_end_token_id", config.tokens.audio_end}});
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i].second < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          ids[i].first, " must be set (>= 0) for ", ModelFamilyName(config.family), ", got ",
          ids[i].second));
    }
    for (size_t j = 0; j < i; ++j) {
      if (ids[i].second == ids[j].second) {
        return absl::InvalidArgumentError(absl::StrCat(ids[i].first, " and ", ids[j].first,
                                                       " are both ", ids[i].second));
      }
    }
  }
  return absl::OkStatus();
}

PositionPolicy PolicyFor(const ModelConfig& config) {
  PositionPolicy p;
  p.convention = config.convention;
  switch (config.family) {
    case ModelFamily::kQwen2Vl:
      break;
    case ModelFamily::kQwen2_5Vl:
      // vLLM positions images by frame (it only admits t == 1); HF uses interval 0.
      p.image_time =
          config.convention == Convention::kVllm ? TimeIndex::kFrame : TimeIndex::kZero;
      p.video_time = config.video_time_rounding == VideoTimeRounding::kTruncateIntervalFirst
                         ? TimeIndex::kTruncateIntervalFirst
                         : TimeIndex::kScaleThenTruncate;
      break;
    case ModelFamily::kQwen3Vl:
      p.video_frames_as_blocks = true;
      break;
    case ModelFamily::kQwen2_5Omni:
      p.image_time = TimeIndex::kScaledFrame;
      p.video_time = TimeIndex::kOmniTruncatedFloat32;
      p.has_audio = true;
      p.audio_in_video = AudioInVideoOrder::kChunked;
      p.audio_in_video_shares_markers = true;
      p.audio_length = PositionPolicy::AudioLength::kQwen2_5Omni;
      p.delta_against_unpadded = true;
      break;
    case ModelFamily::kQwen3Omni:
      p.image_time = TimeIndex::kScaledFrame;
      p.video_time = TimeIndex::kOmniFloat32;
      p.float_positions = true;
      p.has_audio = true;
      p.audio_in_video = AudioInVideoOrder::kMergeByTime;
      p.audio_length = PositionPolicy::AudioLength::kQwen3Omni;
      p.delta_against_unpadded = true;
      break;
  }
  return p;
}

int64_t AudioTokenCount(PositionPolicy::AudioLength rule, int64_t n) {
  switch (rule) {
    case PositionPolicy::AudioLength::kQwen2_5Omni:
      return FloorDiv(FloorDiv(n - 1, 2) + 1 - 2, 2) + 1;
    case PositionPolicy::AudioLength::kQwen3Omni: {
      const int64_t g = FloorDiv(n % 100 - 1, 2) + 1;
      return FloorDiv(FloorDiv(g - 1, 2) + 1 - 1, 2) + 1 + (n / 100) * 13;
    }
    case PositionPolicy::AudioLength::kNone:
      break;
  }
  return 0;
}

}  // namespace mrope
