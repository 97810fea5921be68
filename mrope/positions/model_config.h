#ifndef MROPE_POSITIONS_MODEL_CONFIG_H_
#define MROPE_POSITIONS_MODEL_CONFIG_H_

// What a model needs to turn a prompt into M-RoPE position ids, as data. Every model runs the
// same scanner and builder (mrope/positions/scanner.h, sequence_positions.h); the differences
// between families and between conventions (whose generate() and get_rope_index to follow) are
// the fields of PositionRules and PositionPolicy. positions/ knows rules, not families: the
// families are rows of the model layer's table (mrope/model/model_family.h), each holding its
// PositionRules, and a ModelConfig points at one of them.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mrope {

// How Qwen2.5-VL turns (temporal grid k, seconds per grid spg) into a time index.
enum class VideoTimeRounding {
  // t = trunc(k * (double(spg_f32) * tokens_per_second)): the Qwen reference, vLLM, SGLang,
  // TensorRT-LLM.
  kScaleThenTruncate,
  // t = k * trunc(spg) * tokens_per_second in integers: HF transformers v4 (its quirk 1).
  kTruncateIntervalFirst,
};

// Whose batching, padding, delta and decode rules to follow. What each one means is data: the
// ConventionRules of ConventionRulesOf (below), whose names the model layer parses
// (ParseConvention, mrope/model/model_family.h) and whose release ranges per family it lists
// (mrope/model/conventions.h).
enum class Convention {
  // HF transformers v4 get_rope_index + generate() (golden: v4.57.6): padded batch, pads hold 1
  // (0 for Qwen3-Omni with grids), delta against the padded length, text-only batches take
  // cumsum(mask) - 1, decode at cache position + delta on all axes.
  kHfV4,
  // HF transformers 5.0 to 5.2 (golden: v5.2.0): the family's 5.x get_rope_index (pads 0 for
  // the Qwen rules, a clamped delta for Qwen2-VL's rule), generate() prefilling text-only
  // batches with cumsum(mask) - 1 and decoding each axis from its own last value.
  kHfV5_2,
  // HF transformers from 5.3 (golden: v5.15.0): blocks from mm_token_type_ids, text after a
  // block resumes at its start + max(h, w) / merge, delta against the unpadded length, pads 0.
  // The Omni thinkers (PositionRules::conventions_as): v4's get_rope_index with 5.16's
  // generate(), which decodes each axis from its own last value.
  kHfV5,
  // vLLM: each row is its own unpadded request, delta against the unpadded length, pads 0,
  // image grids must have t == 1.
  kVllm,
  // HF transformers from 5.18: kHfV5 with Qwen2.5-VL's video time scaled, then truncated
  // (huggingface/transformers#48669).
  kHfV5_18,
};

// Token ids that mark prompt structure. -1 means "this model has no such token".
struct SpecialTokens {
  int64_t image = -1;
  int64_t video = -1;
  // Open and close every image block and every video frame block (GLM: image_start/image_end).
  int64_t vision_start = -1;
  int64_t vision_end = -1;
  int64_t audio = -1;
  int64_t audio_start = -1;
  int64_t audio_end = -1;
  // Bracket a whole video whose frames are image-token blocks (GLM's <|begin_of_video|>).
  int64_t video_start = -1;
  int64_t video_end = -1;
};

struct PositionRules;  // below

// A model's position parameters (proto: mrope.v1.PositionParams).
struct ModelConfig {
  // The family's rules: a row of the model layer's table (static storage, never null in a
  // config that ValidateModelConfig accepted).
  const PositionRules* rules = nullptr;
  SpecialTokens tokens;
  int32_t spatial_merge_size = 2;
  double tokens_per_second = 2;          // Qwen2.5-VL video time scale
  double position_id_per_seconds = 25;   // Omni audio/video time scale
  double seconds_per_chunk = 2;          // Qwen2.5-Omni audio-in-video interleave chunk
  // ERNIE-4.5-VL: a video grid's t is t / temporal_merge_size temporal positions.
  int32_t temporal_merge_size = 1;
  VideoTimeRounding video_time_rounding = VideoTimeRounding::kScaleThenTruncate;
  Convention convention = Convention::kHfV4;
  // Planes of positions (the rotary's len(mrope_section)): 3, or [3, kMaxPositionAxes] under
  // PositionScheme::kSequentialGrid, whose leading num_axes - 3 axes are sequential.
  int32_t num_axes = 3;
};

inline constexpr int32_t kMaxPositionAxes = 8;

// Division of grid values (h, w >= 0) by a spatial_merge_size that ValidateModelConfig accepted
// ([1, 64]): a shift for the power-of-two sizes of every released model, a division otherwise.
// Planners and scanners divide every grid's h and w; four 64-bit divisions per frame cost about
// a tenth of Qwen3-VL's plan.
class MergeDivisor {
 public:
  explicit MergeDivisor(int32_t merge_size)
      : merge_size_(merge_size),
        shift_(merge_size > 0 && (merge_size & (merge_size - 1)) == 0 ? __builtin_ctz(merge_size)
                                                                      : -1) {}

  int64_t Quotient(int64_t x) const { return shift_ >= 0 ? x >> shift_ : x / merge_size_; }
  bool Divides(int64_t x) const {
    return shift_ >= 0 ? (x & (merge_size_ - 1)) == 0 : x % merge_size_ == 0;
  }

 private:
  int32_t merge_size_;
  int32_t shift_;  // log2(merge_size) when a power of two, else -1
};

// Largest tokens_per_second, position_id_per_seconds and seconds_per_chunk accepted (the
// published checkpoints use 2, 25 or 13, and 2).
inline constexpr double kMaxTimeScale = 1e6;

// Checks ids and scales: rules set, num_axes 3 (or in [3, kMaxPositionAxes] where the scheme
// takes more), merge sizes in [1, 64], time scales in (0, kMaxTimeScale],
// distinct ids for the tokens the rules read (named by their HF config keys), a convention the
// rules support.
absl::Status ValidateModelConfig(const ModelConfig& config);

// --- The policy: model differences as data. ----------------------------------------------

// Time index of temporal grid k of an image or video block.
enum class TimeIndex {
  kFrame,                   // k
  kZero,                    // 0 (Qwen2.5-VL images)
  kScaledFrame,             // k * position_id_per_seconds (Omni images)
  kTruncateIntervalFirst,   // k * trunc(spg) * tokens_per_second
  kScaleThenTruncate,       // trunc(k * (double(spg) * tokens_per_second))
  kSecondsTruncatedFloat32,  // int64(f32(f32(k * spg) * position_id_per_seconds))
  kSecondsFloat32,           // f32(f32(k * spg) * position_id_per_seconds), no truncation
};

// Which request list holds a family's seconds per temporal grid (one float32 per video).
enum class SecondsList {
  kNone,                // time does not depend on seconds: the lists are not read
  kSecondPerGridTs,     // second_per_grid_ts (the Qwen2.5-VL processor's name)
  kVideoSecondPerGrid,  // video_second_per_grid (the Omni processors' name)
};

// How a prompt marks video tokens.
enum class VideoMarking {
  // <vision_start> video_token... <vision_end>: videos have their own token id.
  kVideoTokenId,
  // <video_start> then per frame <vision_start> image_token... <vision_end> and text, then
  // <video_end> (GLM): an image token is a video token while a video is open. Every frame is
  // its own block (video_frames_as_blocks) and a video must be given all its frames.
  kImageTokensInVideoBrackets,
};

// Audio tokens per clip of n mel frames (floor divisions, as HF).
enum class AudioLength {
  kNone,
  kStrideTwoTwice,        // ((n - 1) // 2 + 1 - 2) // 2 + 1 (Qwen2.5-Omni)
  kPer100FrameChunks,     // 13 per full 100 frames, the rest strided three times (Qwen3-Omni)
};

// How an audio-in-video block orders and positions its video and audio tokens.
enum class AudioInVideoOrder {
  kNone,            // the family has no audio-in-video
  kChunked,         // Qwen2.5-Omni: seconds_per_chunk chunks, video chunk j then audio chunk j
  kMergeByTime,     // Qwen3-Omni: merged token by token by T, video first on ties
};

// A batch with no image or video grid.
enum class TextOnlyBatch {
  // HF v4: cumsum(mask) - 1, padding slots 1 and counted in the row's maximum (quirk 5).
  kCumsumPadsInMax,
  // HF v5.2 generate(): cumsum(mask) - 1 with padding 0 and stored rope_deltas 0;
  // get_rope_index's delta numbers each row's real tokens (n - L, clamped where the rule is).
  kGenerateCumsum,
  // Like any row: the real tokens take 0..n-1 (vLLM, HF v5.15).
  kRowsNumbered,
};

// Decode positions after the prompt.
enum class DecodeRule {
  kCachePlusDelta,   // step k: decode_offset + k + decode_delta on all axes (HF v4, vLLM)
  kPerAxisFromLast,  // step k: the prompt's last column + 1 + k, axis by axis (HF v5 generate)
  // GLM-Image: the row's target grids (images_per_sample past its source images), last first,
  // each (dp, dp + i, dp + j) row by row with dp += max(h, w) after it, then (dp, dp, dp); dp
  // starts after the prompt's last real token; the last step repeats past the table's end.
  kTargetGridTable,
};

// Where the text after a vision block resumes.
enum class BlockEnd {
  kMaxPlusOne,           // the block's maximum over all axes + 1 (HF v4, v5.2, vLLM)
  kStartPlusLargerSide,  // the block's first position + max(h, w) / merge (HF v5.15)
};

// How a family's rules place positions.
enum class PositionScheme : uint8_t {
  // Blocks placed by the span planner (SequencePositions) under the rest of the policy: three
  // axes (t, h, w).
  kPlacedSpans,
  // HunYuan-VL's XD-RoPE (mrope/positions/sequential_grid.h): every token's index on every
  // axis, an image's grid tokens (column, row, image ordinal) on the last three.
  kSequentialGrid,
};

// A token id the rules read: its HF config key stem ("image" for image_token_id, also read as
// image_token_index) and the SpecialTokens field it fills.
struct TokenKey {
  absl::string_view hf_name;
  int64_t SpecialTokens::*field;
  // The reference takes the id from the tokenizer, not config.json: a config.json without the
  // key gets the preset's id.
  bool tokenizer_default = false;
};

struct PositionPolicy {
  TimeIndex image_time = TimeIndex::kFrame;
  TimeIndex video_time = TimeIndex::kFrame;
  SecondsList seconds_list = SecondsList::kNone;
  VideoMarking video_marking = VideoMarking::kVideoTokenId;
  // Qwen3-VL, GLM: every video frame is its own <vision_start>...<vision_end> block (t = 1).
  bool video_frames_as_blocks = false;
  // Qwen3-Omni: positions are float32 and every addition is a float32 addition.
  bool float_positions = false;
  // Omni: blocks are always closed; audio blocks exist.
  bool has_audio = false;
  AudioInVideoOrder audio_in_video = AudioInVideoOrder::kNone;
  // Audio-in-video <vision_start><audio_start> (and the end pair) share one position
  // (Qwen2.5-Omni) instead of taking two consecutive ones (Qwen3-Omni).
  bool audio_in_video_shares_markers = false;
  AudioLength audio_length = AudioLength::kNone;
  Convention convention = Convention::kHfV4;
  // HF: the delta returned by get_rope_index is against the unpadded length (Omni) instead of
  // the padded one (VL). Decode positions are the same either way.
  bool delta_against_unpadded = false;
  // --- Batch rules, set by the convention (ConventionRules) and the family's 5.x code. ---
  // Each row is its own unpadded request (vLLM): decode from the row length, images t == 1.
  bool per_request = false;
  double pad_value = 1;  // what padding slots hold in a batch with grids
  bool clamp_delta = false;  // get_rope_index's delta is max(delta, 0)
  TextOnlyBatch text_only = TextOnlyBatch::kCumsumPadsInMax;
  DecodeRule decode = DecodeRule::kCachePlusDelta;
  BlockEnd block_end = BlockEnd::kMaxPlusOne;
  // Blocks are the runs of mm_token_type_ids (required), not found by the token scan.
  bool blocks_from_type_ids = false;
  // GLM under a convention whose blocks come from mm_token_type_ids: they are accepted and not
  // read, as the token scan finds the same blocks (PositionRules::v5_blocks_by_token_scan).
  bool type_ids_unread = false;
  // Blocks are the runs of image and video tokens; start and end ids are text (GLM-Image,
  // and the vLLM families whose positions read no marker: Isaac, Keye, openPangu-VL).
  bool blocks_from_media_runs = false;
  // Isaac: a block's h and w axes are its row and column, without the block's start (t has it).
  bool spatial_from_zero = false;
  // Isaac: the text after the last block resumes at that block's last t + 1, not at its max + 1
  // (text between blocks still resumes at the max + 1).
  bool final_text_after_last_time = false;
  // Keye: a video block's frames are blocks back to back, frame k + 1 at frame k's max + 1
  // (start + (k + 1) * max(h, w) / merge), not one grid with time index k.
  bool video_frames_stacked = false;
  // openPangu-VL (vLLM): a video's placeholder is its frames separated by this many text tokens
  // (its <vision_end><vision_start> pairs), from the first frame's first token to the last's
  // last; 0: the placeholder is the grid's tokens (or Qwen3-VL's timestamped frames).
  int32_t vllm_frame_separator_tokens = 0;
  // GLM-Image: get_rope_index's deltas, and what generate() stores, are 0.
  bool zero_deltas = false;
  // The convention's code takes images only (PositionRules::vllm_images_only): videos refused.
  bool images_only = false;
  // Last, beside the bools: it fits their padding.
  PositionScheme scheme = PositionScheme::kPlacedSpans;
};

// Under `convention`, a family follows `rules_of`'s rules but decodes by `decode`.
struct ConventionAs {
  Convention convention;
  Convention rules_of;
  DecodeRule decode;
};

// A model family's position rules, as data: the policy under its reference convention, the
// token ids it reads, and what its transformers 5.x code does differently. The model layer's
// rows (mrope/model/model_family.h) hold one each.
struct PositionRules {
  absl::string_view name;  // the family's name, for messages
  std::vector<TokenKey> token_keys;
  PositionPolicy policy;  // under hf_v4 and the preset's rounding
  // The family's get_rope_index in transformers 5.0 to 5.2: what its padding slots hold (1 for
  // GLM's and ERNIE's code, 0 for Qwen's), and whether it clamps its delta at 0 (Qwen2-VL's
  // rule, huggingface/transformers#43952). From 5.3 every family's pads hold 0.
  double v5_2_pad_value = 0;
  bool v5_2_clamps_delta = false;
  // GLM's bracketed videos: the blocks 5.3+'s mm_token_type_ids give are the frames the token
  // scan finds, so the scan finds them (mrope's type-id scan refuses the brackets).
  bool v5_blocks_by_token_scan = false;
  // Conventions under which the family's code follows another convention's rules with a
  // decode rule of its own (the Omni thinkers keep v4.57.6's get_rope_index through 5.x).
  std::vector<ConventionAs> conventions_as;
  // The conventions implemented (and golden-checked) for the family.
  std::vector<Convention> conventions = {Convention::kHfV4};
  // The family's vLLM code takes images only (Cohere Compass: a video raises there).
  bool vllm_images_only = false;
};

// What fills a batch's padding slots when it has grids.
enum class PadSource {
  kPolicy,          // the family's policy (HF v4: 1; Qwen3-Omni: 0)
  kFamilyV5_2Code,  // PositionRules::v5_2_pad_value
  kZero,
};

// What a convention means, as data (one row per Convention).
struct ConventionRules {
  Convention convention;
  // Its short name ("hf_v4", "hf_v5_2", "hf_v5", "hf_v5_18", "vllm"): what outputs, presets
  // ("<family>_<name>") and golden folders say; the model layer also names it by release.
  absl::string_view name;
  bool per_request;
  PadSource pads;
  bool clamps_where_v5_2_does;
  bool delta_against_unpadded;
  TextOnlyBatch text_only;
  DecodeRule decode;
  BlockEnd block_end;
  bool images_step_time;  // images take t_idx = k where the family's HF v4 code gives 0
  bool blocks_from_type_ids;
  // The reference's own Qwen2.5-VL video time (transformers before 5.18 truncates the interval
  // first, vLLM and transformers 5.18+ scale then truncate). The family's presets under the
  // convention take it; the family's own preset keeps the Qwen reference's.
  VideoTimeRounding reference_video_time;
};
const ConventionRules& ConventionRulesOf(Convention convention);

// The rules' policy with the config's convention and video time rounding applied.
PositionPolicy PolicyFor(const ModelConfig& config);

// The HF name of a token field for `rules` ("image_start" for GLM's vision_start), as its
// config.json spells it without the _token_id suffix ("token" for a field the rules do not
// read).
absl::string_view TokenName(const PositionRules& rules, int64_t SpecialTokens::*field);

// Whether the policy reads ModelConfig::tokens_per_second (Qwen2.5-VL video time) or
// position_id_per_seconds and seconds_per_chunk (Omni time): these are then required in a
// config.json and shown by explain.
bool UsesTokensPerSecond(const PositionPolicy& policy);
bool UsesPositionIdPerSeconds(const PositionPolicy& policy);

// Audio tokens an audio clip of `feature_frames` mel frames becomes (floor divisions, as HF).
int64_t AudioTokenCount(AudioLength rule, int64_t feature_frames);

}  // namespace mrope

#endif  // MROPE_POSITIONS_MODEL_CONFIG_H_
