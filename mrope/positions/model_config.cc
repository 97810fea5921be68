#include "mrope/positions/model_config.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mrope/positions/model_family.h"

namespace mrope {
namespace {

// Python's floor division, which HF's audio-length formulas use (differs from C++ for < 0).
int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

}  // namespace

absl::StatusOr<ModelFamily> ParseModelFamily(absl::string_view name) {
  for (const ModelFamilyInfo& row : ModelFamilies()) {
    if (row.name == name) return row.family;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown model family '", name,
                                                 "'; known: ", absl::StrJoin(FamilyNames(), ", ")));
}

absl::string_view ModelFamilyName(ModelFamily family) { return FamilyInfo(family).name; }

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
  const ModelFamilyInfo& row = FamilyInfo(config.family);
  if (config.convention == Convention::kVllm && !row.supports_vllm) {
    return absl::InvalidArgumentError(
        absl::StrCat("the vLLM convention is not implemented for ", row.name));
  }
  const std::vector<TokenKey>& keys = row.token_keys;
  for (size_t i = 0; i < keys.size(); ++i) {
    const int64_t id = config.tokens.*keys[i].field;
    if (id < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          keys[i].hf_name, "_token_id must be set (>= 0) for ", row.name, ", got ", id));
    }
    for (size_t j = 0; j < i; ++j) {
      if (id == config.tokens.*keys[j].field) {
        return absl::InvalidArgumentError(absl::StrCat(keys[i].hf_name, "_token_id and ",
                                                       keys[j].hf_name, "_token_id are both ",
                                                       id));
      }
    }
  }
  return absl::OkStatus();
}

PositionPolicy PolicyFor(const ModelConfig& config) {
  PositionPolicy p = FamilyInfo(config.family).policy;
  p.convention = config.convention;
  // vLLM positions images by frame (it admits t == 1 only); interval 0 is HF's rule.
  if (config.convention == Convention::kVllm && p.image_time == TimeIndex::kZero) {
    p.image_time = TimeIndex::kFrame;
  }
  if (UsesTokensPerSecond(p)) {
    p.video_time = config.video_time_rounding == VideoTimeRounding::kTruncateIntervalFirst
                       ? TimeIndex::kTruncateIntervalFirst
                       : TimeIndex::kScaleThenTruncate;
  }
  return p;
}

bool UsesTokensPerSecond(const PositionPolicy& policy) {
  return policy.video_time == TimeIndex::kScaleThenTruncate ||
         policy.video_time == TimeIndex::kTruncateIntervalFirst;
}

bool UsesPositionIdPerSeconds(const PositionPolicy& policy) {
  return policy.video_time == TimeIndex::kSecondsTruncatedFloat32 ||
         policy.video_time == TimeIndex::kSecondsFloat32;
}

int64_t AudioTokenCount(AudioLength rule, int64_t n) {
  switch (rule) {
    case AudioLength::kStrideTwoTwice:
      return FloorDiv(FloorDiv(n - 1, 2) + 1 - 2, 2) + 1;
    case AudioLength::kPer100FrameChunks: {
      const int64_t g = FloorDiv(n % 100 - 1, 2) + 1;
      return FloorDiv(FloorDiv(g - 1, 2) + 1 - 1, 2) + 1 + (n / 100) * 13;
    }
    case AudioLength::kNone:
      break;
  }
  return 0;
}

}  // namespace mrope
