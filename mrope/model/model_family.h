#ifndef MROPE_MODEL_MODEL_FAMILY_H_
#define MROPE_MODEL_MODEL_FAMILY_H_

// The model layer: one row per model family holds everything mrope knows about it (its name,
// its HF `model_type` values and where its config.json keeps the ids, its position rules and
// their parameters, its preset token ids and time scales, its preset rotary values, the QK-norm
// form the fused kernel needs, and how its processor lays prompts out). Config loading,
// presets, the proto, the CLI, Python and the tests read it. It sits above positions/ and
// rotary/, which know rules, not families: a family whose rules PositionRules expresses is added
// by one row (plus its ModelFamily and proto enum values). A convention (whose transformers or
// vLLM semantics to follow) is one value, ConventionRules in mrope/positions/model_config.h;
// each row lists the conventions implemented for it, its preset takes its reference's.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mrope/positions/model_config.h"
#include "mrope/rotary/hf_cos_sin.h"
#include "mrope/rotary/rope_math.h"

namespace mrope {

// The key of a row of the family table.
enum class ModelFamily {
  kQwen2Vl,
  kQwen2_5Vl,
  kQwen3Vl,
  kQwen2_5Omni,
  kQwen3Omni,
  kGlm4v,     // GLM-4.1V
  kGlm4vMoe,  // GLM-4.5V
  kQwen3_5,
  kQwen3_5Moe,
  kGlm46v,  // GLM-4.6V
  kGlmOcr,
  kPaddleOcrVl,
  kErnie4_5VlMoe,
  kGlmImage,
  kQwen4Exp,
  kCosmos3Omni,
  kCosmos3Edge,
  kOpenPanguVl,  // openPangu-VL (vLLM)
  kIsaac,        // Isaac (vLLM)
  kKeye,         // Keye-VL (vLLM)
  kCohereCompass,
  kHunyuanVl,
};

// A `model_type` of HF config.json and the object holding the family's ids and time scales.
struct HfModelType {
  absl::string_view model_type;
  absl::string_view ids_under;  // "" (top level) or e.g. "thinker_config"
};

// Where a config.json's M-RoPE layout comes from.
enum class SectionSource {
  kConfig,          // mrope_section and mrope_interleaved as config.json gives them (absent: 1-D)
  kConfigRequired,  // the same, but mrope_section is required (PaddleOCR-VL's attention reads it)
  // The rotary code (transformers 5.x families): it defaults mrope_section when config.json
  // has none and decides the layout (Qwen3.5 interleaved, GLM blocked, ERNIE its own).
  kRotaryCode,
  // The model code derives mrope_section from config.json's top-level head_dim
  // (RopePreset::default_head_dim when absent) by RopePreset::head_dim_divisors, whatever config.json's mrope_section says;
  // mrope_interleaved as config.json gives it (Isaac: vLLM's IsaacForConditionalGeneration).
  kHeadDim,
};

// Rotary values of the published checkpoint (what the preset's cos/sin use).
struct RopePreset {
  int32_t head_dim = 0;
  double theta = 0;
  std::vector<int32_t> mrope_section;  // one entry per axis
  // How the sections map pairs to axes (with SectionSource::kRotaryCode also for config.json).
  MropeLayout mrope_layout = MropeLayout::kBlocked;
  double partial_rotary_factor = 1.0;  // rotary_dim = int(head_dim * factor)
  // How the rotary dims pair, for presets and config.json alike: NeoX halves, or GPT-J pairs
  // (2j, 2j+1) (HF's rotate_half_llm, ERNIE's rotate_half_text).
  RotaryLayout layout = RotaryLayout::kNeox;
  SectionSource sections = SectionSource::kConfig;
  // How the family's text rotary module returns cos/sin in transformers 4.x and in 5.0 to 5.16
  // (from 5.17 on it follows the pairing: HfCosSinLayout).
  CosSinLayout cos_layout_v4 = CosSinLayout::kCat;
  CosSinLayout cos_layout_v5 = CosSinLayout::kCat;
  // The rotary module reads rope_scaling's `alpha` and `xdrope_section` (HunYuan-VL): a dynamic
  // (or "xdrope") rope with alpha is static NTK, base theta * alpha^(head_dim / (head_dim - 2)).
  bool ntk_alpha = false;
  // SectionSource::kHeadDim: axis i takes head_dim / head_dim_divisors[i] pairs (rounded down).
  std::vector<int32_t> head_dim_divisors;
  // The layout config.json's mrope_interleaved true selects: Qwen3-VL's, or the family's own
  // (openPangu: vLLM's MRotaryEmbeddingInterleaved, kPanguInterleaved).
  MropeLayout interleaved_layout = MropeLayout::kInterleaved;
  // The head_dim the family's config class gives a config.json without one, top level and text
  // config alike (Isaac: Qwen3Config's field default); 0: hidden_size / num_attention_heads.
  int32_t default_head_dim = 0;
};

// The sections a SectionSource::kHeadDim family derives from `head_dim`.
std::vector<int32_t> SectionsFromHeadDim(const RopePreset& rope, int64_t head_dim);

// The RMSNorm the text attention applies to q and k, before the rotary unless said (what a
// fused norm + rotary kernel must compute).
enum class QkNorm {
  kNone,           // no q/k norm
  kWeight,         // Qwen3: w * x / rms(x)
  kOnePlusWeight,  // Qwen3.5: (1 + w) * x / rms(x)
  kWeightAfterRotary,  // HunYuan-VL: w * x / rms(x) of the rotated q and k
};

// How the family's processor writes media into the prompt (what the token scan expects;
// ProcessorLayoutText says it in words).
enum class ProcessorLayout {
  kVisionBlocks,
  kFramesWithTimestamps,
  kOmniAudio,
  kGlmVideoBrackets,
  kTypedRuns,
  kImageGenerationTargets,
  kImageRuns,
  kSeparatedFrames,
  kImageGridRows,
};
absl::string_view ProcessorLayoutText(ProcessorLayout layout);

// "none", "weight" or "one_plus_weight".
absl::string_view QkNormName(QkNorm norm);

// A preset other than the row's own: the row's values under another convention or rounding.
struct PresetVariant {
  std::string name;
  VideoTimeRounding video_time_rounding;
  Convention convention;
};

// The arguments after input_ids of the reference's get_rope_index (modeling_<family>.py), in
// its positional order, so that positional calls (Qwen2VLModel.forward passes attention_mask
// fourth) bind as in transformers.
struct RopeIndexSignature {
  std::vector<absl::string_view> hf;     // hf_v4, hf_v5_2, and vllm (the checkpoints' HF code)
  // hf_v5 and hf_v5_18 (transformers >= 5.3: mm_token_type_ids first), in rows that have it
  std::vector<absl::string_view> hf_v5;
};

struct ModelFamilyInfo {
  ModelFamily family;
  // Preset and family name; the proto enum value is its upper case (PositionParams::Family).
  absl::string_view name;
  absl::string_view checkpoint;  // where the preset values come from
  std::vector<HfModelType> hf_model_types;
  PositionRules rules;  // the preset points at it
  // ids, merge sizes and time scales of `checkpoint`, under the family's reference convention
  ModelConfig preset;
  RopePreset rope;
  QkNorm qk_norm = QkNorm::kNone;
  ProcessorLayout processor = ProcessorLayout::kVisionBlocks;
  // The vision_config key of config.json that holds the spatial merge size (Isaac:
  // pixel_shuffle_scale_factor).
  absl::string_view spatial_merge_key = "spatial_merge_size";
  // Every convention of rules.conventions other than the preset's, as "<name>_<convention>",
  // plus any named rounding variant ("qwen2_5_vl_hf").
  std::vector<PresetVariant> variants;
  RopeIndexSignature rope_index;
  // Non-empty: the rotary is per attention layer type (Cohere Compass): config.json's
  // text_config.layer_types names each layer's type and rope_parameters holds one rotary per
  // type, null for a NoPE type (it rotates nothing). The preset's layers' types; of those, the
  // NoPE ones (`preset_nope_layer_types`); the others rotate with `rope`.
  std::vector<absl::string_view> preset_layer_types;
  std::vector<absl::string_view> preset_nope_layer_types;
};

// get_rope_index's arguments after input_ids, in the positional order of `family`'s reference
// under `convention` (its row's rope_index).
const std::vector<absl::string_view>& RopeIndexArguments(ModelFamily family,
                                                         Convention convention);

// All rows, in the order of ModelFamily.
const std::vector<ModelFamilyInfo>& ModelFamilies();

// A transformers release by (major, minor), e.g. {5, 23} for 5.23.0.
struct TransformersRelease {
  int major = 0;
  int minor = 0;
};

// transformers 5.17.0 (PR #48105): the text rotary modules apply the sections themselves and
// return cos/sin in the columns the family's rotation reads (`cat` for NeoX halves,
// `repeat_interleave` for GPT-J pairs); apply_multimodal_rotary_pos_emb is gone.
inline constexpr TransformersRelease kRotaryModuleAppliesSections = {5, 17};

// The layout of the cos/sin `row`'s text rotary module returns in transformers `release`
// (`mrope rotary --golden`, Python's Plan.cos_sin(layout="hf") and Model.cos_sin).
CosSinLayout HfCosSinLayout(const ModelFamilyInfo& row, TransformersRelease release);

// A release's leading numbers, at least major.minor: "5.23.0" -> {5, 23, 0}; a PEP 440 suffix
// ends them ("5.17.0.dev0", "5.24.0rc1", "5.23.0+cu130" -> {5, 17, 0}, {5, 24, 0}, {5, 23, 0}).
// InvalidArgument naming `version` otherwise.
absl::StatusOr<std::vector<int64_t>> ParseRelease(absl::string_view version);

// ParseRelease's major.minor: "5.17.0.dev0" -> {5, 17}.
absl::StatusOr<TransformersRelease> ParseTransformersRelease(absl::string_view version);

// The row of `family`.
const ModelFamilyInfo& FamilyInfo(ModelFamily family);

// The row whose rules `config` follows.
const ModelFamilyInfo& FamilyOf(const ModelConfig& config);

// The row one of whose hf_model_types is `model_type`, or nullptr.
const ModelFamilyInfo* FamilyForModelType(absl::string_view model_type);

// Canonical family names (the rows' names, e.g. "qwen2_vl", "glm4v"; see FamilyNames()).
absl::StatusOr<ModelFamily> ParseModelFamily(absl::string_view name);
absl::string_view ModelFamilyName(ModelFamily family);

// A convention by its name by release ("transformers-5.3", ConventionReleaseName in
// mrope/model/conventions.h) or its short name ("hf_v4", "hf_v5_2", "hf_v5", "hf_v5_18",
// "vllm"; also "hf" for hf_v4).
absl::StatusOr<Convention> ParseConvention(absl::string_view name);
// The short name (what outputs, preset variants and golden folders use).
absl::string_view ConventionName(Convention convention);
// Every Convention, in enum order.
const std::vector<Convention>& AllConventions();

// Built-in presets with the published checkpoints' values (see tests/golden/README.md): every
// family name, plus the variants of the table's rows (PresetNames() lists them all), e.g.
// "qwen2_5_vl_vllm" (Qwen2.5-VL under vLLM's conventions), "qwen2_vl_hf_v5_2" (transformers
// v5.2.0) and "qwen2_5_vl_hf" (HF v4's truncate-interval-first video time). Every golden folder
// of position cases is a preset name.
absl::StatusOr<ModelConfig> PresetConfig(absl::string_view name);

// Family names, and every preset name (families and their variants), in table order.
std::vector<std::string> FamilyNames();
std::vector<std::string> PresetNames();

}  // namespace mrope

#endif  // MROPE_MODEL_MODEL_FAMILY_H_
