#ifndef MROPE_POSITIONS_MODEL_CONFIG_H_
#define MROPE_POSITIONS_MODEL_CONFIG_H_

// What a model family needs to turn a prompt into M-RoPE position ids, as data. Every family
// runs the same scanner and builder (mrope/positions/scanner.h, sequence_positions.h); the
// differences between families (and vLLM's conventions) are the fields of PositionPolicy. Each
// family is one row of the table in mrope/positions/model_family.h, which holds its policy, its
// preset values and where its HF config.json keeps them.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mrope {

// The key of a row of the family table (mrope/positions/model_family.cc).
enum class ModelFamily {
  kQwen2Vl,
  kQwen2_5Vl,
  kQwen3Vl,
  kQwen2_5Omni,
  kQwen3Omni,
  kGlm4v,     // GLM-4.1V
  kGlm4vMoe,  // GLM-4.5V
};

// How Qwen2.5-VL turns (temporal grid k, seconds per grid spg) into a time index.
enum class VideoTimeRounding {
  // t = trunc(k * (double(spg_f32) * tokens_per_second)): the Qwen reference, vLLM, SGLang,
  // TensorRT-LLM.
  kScaleThenTruncate,
  // t = k * trunc(spg) * tokens_per_second in integers: HF transformers v4 (its quirk 1).
  kTruncateIntervalFirst,
};

// Whose batching and delta conventions to follow.
enum class Convention {
  // HF transformers v4.57.6 get_rope_index + generate(): padded batch, pads hold 1 (0 for
  // Qwen3-Omni with grids), delta against the padded length, text-only batches take
  // cumsum(mask) - 1.
  kHfTransformers,
  // vLLM: each row is its own unpadded request, delta against the unpadded length, pads 0,
  // image grids must have t == 1.
  kVllm,
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

// A model's position parameters (proto: mrope.PositionParams).
struct ModelConfig {
  ModelFamily family = ModelFamily::kQwen2Vl;
  SpecialTokens tokens;
  int32_t spatial_merge_size = 2;
  double tokens_per_second = 2;          // Qwen2.5-VL video time scale
  double position_id_per_seconds = 25;   // Omni audio/video time scale
  double seconds_per_chunk = 2;          // Qwen2.5-Omni audio-in-video interleave chunk
  VideoTimeRounding video_time_rounding = VideoTimeRounding::kScaleThenTruncate;
  Convention convention = Convention::kHfTransformers;
};

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

// Canonical family names (the rows' names, e.g. "qwen2_vl", "glm4v"; see FamilyNames()).
absl::StatusOr<ModelFamily> ParseModelFamily(absl::string_view name);
absl::string_view ModelFamilyName(ModelFamily family);

// Built-in presets with the published checkpoints' values (see tests/golden/README.md): every
// family name, plus the variants of the table's rows (PresetNames() lists them all), e.g.
// "qwen2_5_vl_vllm" (Qwen2.5-VL under vLLM's conventions) and "qwen2_5_vl_hf" (HF v4's
// truncate-interval-first video time).
absl::StatusOr<ModelConfig> PresetConfig(absl::string_view name);

// Largest tokens_per_second, position_id_per_seconds and seconds_per_chunk accepted (the
// published checkpoints use 2, 25 or 13, and 2).
inline constexpr double kMaxTimeScale = 1e6;

// Checks ids and scales: merge size in [1, 64], time scales in (0, kMaxTimeScale], distinct
// ids for the tokens the family uses (named by their HF config keys), a convention the family
// supports.
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
  Convention convention = Convention::kHfTransformers;
  // HF: the delta returned by get_rope_index is against the unpadded length (Omni) instead of
  // the padded one (VL). Decode positions are the same either way.
  bool delta_against_unpadded = false;
};

// The family row's policy with the config's convention and video time rounding applied.
PositionPolicy PolicyFor(const ModelConfig& config);

// Whether the policy reads ModelConfig::tokens_per_second (Qwen2.5-VL video time) or
// position_id_per_seconds and seconds_per_chunk (Omni time): these are then required in a
// config.json and shown by explain.
bool UsesTokensPerSecond(const PositionPolicy& policy);
bool UsesPositionIdPerSeconds(const PositionPolicy& policy);

// Audio tokens an audio clip of `feature_frames` mel frames becomes (floor divisions, as HF).
int64_t AudioTokenCount(AudioLength rule, int64_t feature_frames);

}  // namespace mrope

#endif  // MROPE_POSITIONS_MODEL_CONFIG_H_
