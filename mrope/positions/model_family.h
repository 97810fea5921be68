#ifndef MROPE_POSITIONS_MODEL_FAMILY_H_
#define MROPE_POSITIONS_MODEL_FAMILY_H_

// The family table: one row per model family holds everything mrope knows about it (its name,
// its HF `model_type` values and where its config.json keeps the ids, its token ids and time
// scales, its preset rotary values, and its PositionPolicy). The scanner, the planner, explain,
// config loading, presets, the proto, --help and the tests read it. A family whose rules the
// policy expresses is added by one row (plus its ModelFamily and proto enum values).

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "mrope/positions/model_config.h"
#include "mrope/rotary/rope_math.h"

namespace mrope {

// A `model_type` of HF config.json and the object holding the family's ids and time scales.
struct HfModelType {
  absl::string_view model_type;
  absl::string_view ids_under;  // "" (top level) or e.g. "thinker_config"
};

// A token id the family reads: its HF config key stem ("image" for image_token_id, also read
// as image_token_index) and the SpecialTokens field it fills.
struct TokenKey {
  absl::string_view hf_name;
  int64_t SpecialTokens::*field;
};

// Rotary values of the published checkpoint (what the preset's cos/sin use).
struct RopePreset {
  int32_t head_dim = 0;
  double theta = 0;
  std::array<int32_t, 3> mrope_section = {0, 0, 0};
  bool interleaved = false;
  double partial_rotary_factor = 1.0;  // rotary_dim = int(head_dim * factor)
  // How the rotary dims pair, for presets and config.json alike: NeoX halves, or GPT-J pairs
  // (2j, 2j+1) for GLM-4.1V (HF's rotate_half_llm).
  RotaryLayout layout = RotaryLayout::kNeox;
};

// A preset other than the row's own: the row's values with another convention or rounding.
struct PresetVariant {
  absl::string_view name;
  VideoTimeRounding video_time_rounding;
  Convention convention;
};

struct ModelFamilyInfo {
  ModelFamily family;
  // Preset and family name; the proto enum value is its upper case (PositionParams::Family).
  absl::string_view name;
  absl::string_view checkpoint;  // where the preset values come from
  std::vector<HfModelType> hf_model_types;
  std::vector<TokenKey> token_keys;
  ModelConfig preset;  // ids, merge size and time scales of `checkpoint`
  RopePreset rope;
  PositionPolicy policy;  // under the HF convention and the preset's rounding
  bool supports_vllm = false;  // vLLM's conventions are implemented (and golden-checked)
  std::vector<PresetVariant> variants;
};

// All rows, in the order of ModelFamily.
const std::vector<ModelFamilyInfo>& ModelFamilies();

// The row of `family`.
const ModelFamilyInfo& FamilyInfo(ModelFamily family);

// The row one of whose hf_model_types is `model_type`, or nullptr.
const ModelFamilyInfo* FamilyForModelType(absl::string_view model_type);

// The HF name of a token field for `family` ("image_start" for GLM's vision_start), as its
// config.json spells it without the _token_id suffix ("token" for a field the family does not
// read).
absl::string_view TokenName(ModelFamily family, int64_t SpecialTokens::*field);

// Family names, and every preset name (families and their variants), in table order.
std::vector<std::string> FamilyNames();
std::vector<std::string> PresetNames();

}  // namespace mrope

#endif  // MROPE_POSITIONS_MODEL_FAMILY_H_
