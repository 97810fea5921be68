#include "mrope/positions/model_config.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace mrope {
namespace {

// Python's floor division, which HF's audio-length formulas use (differs from C++ for < 0).
int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

}  // namespace

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
  if (config.temporal_merge_size < 1 || config.temporal_merge_size > 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "temporal_merge_size must be in [1, 64], got ", config.temporal_merge_size));
  }
  if (config.rules == nullptr) {
    return absl::InvalidArgumentError("the model config has no family rules");
  }
  const PositionRules& row = *config.rules;
  const int32_t max_axes =
      row.policy.scheme == PositionScheme::kSequentialGrid ? kMaxPositionAxes : 3;
  if (config.num_axes < 3 || config.num_axes > max_axes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "num_axes (the length of mrope_section) must be in [3, ", max_axes, "] for ", row.name,
        ", got ", config.num_axes));
  }
  const std::vector<Convention>& conventions = row.conventions;
  if (std::find(conventions.begin(), conventions.end(), config.convention) ==
      conventions.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ", ConventionRulesOf(config.convention).name,
                     " convention is not implemented for ", row.name));
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

const ConventionRules& ConventionRulesOf(Convention convention) {
  // convention, name, per_request, pads, clamps_where_v5_2_does, delta_against_unpadded,
  // text_only, decode, block_end, images_step_time, blocks_from_type_ids, reference_video_time
  static const ConventionRules kRows[] = {
      {Convention::kHfV4, "hf_v4", false, PadSource::kPolicy, false, false,
       TextOnlyBatch::kCumsumPadsInMax, DecodeRule::kCachePlusDelta, BlockEnd::kMaxPlusOne,
       false, false, VideoTimeRounding::kTruncateIntervalFirst},
      {Convention::kHfV5_2, "hf_v5_2", false, PadSource::kFamilyV5_2Code, true, false,
       TextOnlyBatch::kGenerateCumsum, DecodeRule::kPerAxisFromLast, BlockEnd::kMaxPlusOne,
       false, false, VideoTimeRounding::kTruncateIntervalFirst},
      {Convention::kHfV5, "hf_v5", false, PadSource::kZero, false, true,
       TextOnlyBatch::kRowsNumbered, DecodeRule::kPerAxisFromLast,
       BlockEnd::kStartPlusLargerSide, true, true, VideoTimeRounding::kTruncateIntervalFirst},
      {Convention::kVllm, "vllm", true, PadSource::kZero, false, true,
       TextOnlyBatch::kRowsNumbered, DecodeRule::kCachePlusDelta, BlockEnd::kMaxPlusOne, true,
       false, VideoTimeRounding::kScaleThenTruncate},
      {Convention::kHfV5_18, "hf_v5_18", false, PadSource::kZero, false, true,
       TextOnlyBatch::kRowsNumbered, DecodeRule::kPerAxisFromLast,
       BlockEnd::kStartPlusLargerSide, true, true, VideoTimeRounding::kScaleThenTruncate},
  };
  return kRows[static_cast<size_t>(convention)];
}

PositionPolicy PolicyFor(const ModelConfig& config) {
  const PositionRules& rules = *config.rules;
  PositionPolicy p = rules.policy;
  p.convention = config.convention;
  const ConventionAs* as = nullptr;
  for (const ConventionAs& row : rules.conventions_as) {
    if (row.convention == config.convention) as = &row;
  }
  const ConventionRules& c = ConventionRulesOf(as ? as->rules_of : config.convention);
  p.per_request = c.per_request;
  p.images_only = c.per_request && rules.vllm_images_only;
  if (c.pads == PadSource::kFamilyV5_2Code) p.pad_value = rules.v5_2_pad_value;
  if (c.pads == PadSource::kZero) p.pad_value = 0;
  p.clamp_delta = c.clamps_where_v5_2_does && rules.v5_2_clamps_delta;
  p.delta_against_unpadded = p.delta_against_unpadded || c.delta_against_unpadded;
  p.text_only = c.text_only;
  // A family's own rule (GLM-Image's) is not a convention's to change.
  if (p.decode != DecodeRule::kTargetGridTable) p.decode = as ? as->decode : c.decode;
  if (p.block_end == BlockEnd::kMaxPlusOne) p.block_end = c.block_end;
  p.type_ids_unread = c.blocks_from_type_ids && rules.v5_blocks_by_token_scan;
  p.blocks_from_type_ids =
      p.blocks_from_type_ids || (c.blocks_from_type_ids && !p.type_ids_unread);
  if (c.images_step_time && p.image_time == TimeIndex::kZero) p.image_time = TimeIndex::kFrame;
  if (UsesTokensPerSecond(p)) {
    p.video_time = config.video_time_rounding == VideoTimeRounding::kTruncateIntervalFirst
                       ? TimeIndex::kTruncateIntervalFirst
                       : TimeIndex::kScaleThenTruncate;
  }
  return p;
}

absl::string_view TokenName(const PositionRules& rules, int64_t SpecialTokens::*field) {
  for (const TokenKey& key : rules.token_keys) {
    if (key.field == field) return key.hf_name;
  }
  return "token";  // a field the rules do not read
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
