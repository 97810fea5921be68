#ifndef MROPE_POSITIONS_SCANNER_H_
#define MROPE_POSITIONS_SCANNER_H_

// Turns a row of token ids plus the batch's media lists into spans, the way HF's
// get_rope_index reads a prompt, but strictly: every malformed block is an error naming the
// row, the token index and what was expected, where HF would crash or silently mis-position.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mrope/positions/limits.h"
#include "mrope/positions/model_config.h"
#include "mrope/positions/span.h"

namespace mrope {

// Media metadata of a whole batch, in order of appearance (row 0 first, left to right). Field
// names follow the HF processors (and the golden files' `inputs`).
struct MediaInputs {
  std::vector<Grid> image_grid_thw;
  std::vector<Grid> video_grid_thw;
  // Seconds per temporal grid, one per video (empty means 1.0), in the precision given: JSON
  // and the proto carry float32 (what processors give), Python float64 too. Qwen2.5-VL's time
  // rules truncate or scale the value as given, as HF and vLLM do; the Omni rules compute in
  // float32 (HF's .float()).
  std::vector<double> second_per_grid_ts;     // Qwen2.5-VL
  std::vector<double> video_second_per_grid;  // Omni
  std::vector<int64_t> audio_feature_lengths;  // Omni: mel frames per audio clip, in order
  bool use_audio_in_video = false;             // Omni
  // GLM-Image: grids per row; image_grid_thw lists each row's source images, then its
  // generation targets (image_grid_thw past the row's source images).
  std::vector<int64_t> images_per_sample;
};

// How far the media lists have been consumed; shared by the rows of a batch.
struct MediaCursor {
  size_t image = 0;
  size_t video = 0;
  int64_t video_frame = 0;  // Qwen3-VL: next frame of video `video`
  size_t audio = 0;
};

// Checks list lengths and values that do not depend on the tokens: grid values at most
// limits.max_grid_value, seconds per grid finite, >= 0 and one per video. `policy` is
// PolicyFor(config), derived once by the caller (a SequencePlanner holds it).
absl::Status ValidateMediaInputs(const ModelConfig& config, const PositionPolicy& policy,
                                 const MediaInputs& media, const PositionLimits& limits = {});

// Scans the rows of a batch against its media lists. What every row's scan shares (the
// smallest id a scan stops at, the merge-size divisor) is derived once, not per row. `policy`
// is PolicyFor(config). `config`, `policy` and `media` must outlive the scanner; `media` must
// have passed ValidateMediaInputs.
class BatchScanner {
 public:
  BatchScanner(const ModelConfig& config, const PositionPolicy& policy, const MediaInputs& media);

  // Scans one row's real tokens (padding already removed) and appends its spans to `spans` (a
  // caller scanning many rows reuses one vector). `row` is used in error messages. Every id
  // must be in [0, kMaxTokenId]. Reads each token once at memory speed: runs of plain text and
  // of one media token are tested a vector at a time. On error `spans` holds the spans found
  // before it.
  absl::Status ScanRow(absl::Span<const int64_t> tokens, MediaCursor& cursor, int64_t row,
                       std::vector<Span>& spans) const;

  // The same from the row's mm_token_type_ids (transformers 5.x; `types` has one value per real
  // token: 0 text, 1 image, 2 video): every maximal run of 1 or 2 is a block without markers of
  // its own (Span::bracketed false) that takes the next grid (Qwen3-VL: the next frame). Every
  // token of a run must be the image (video) token and no such token may be typed 0: a
  // disagreement is an error naming the row and the index. Not for GLM's bracketed videos.
  absl::Status ScanRowByTypes(absl::Span<const int64_t> tokens, absl::Span<const int64_t> types,
                              MediaCursor& cursor, int64_t row, std::vector<Span>& spans) const;

  // An upper bound on the spans ScanRow appends for a valid row of `seq_len` tokens, for a caller
  // to reserve once (Qwen3-VL's block per video frame otherwise reallocates the vector as it
  // grows).
  int64_t MaxRowSpans(int64_t seq_len) const;

 private:
  const ModelConfig& config_;
  const MediaInputs& media_;
  const PositionPolicy& policy_;
  MergeDivisor merge_;
  // Every valid id below it is plain text (see the constructor).
  int64_t text_limit_ = 0;
  // Media blocks the lists describe (a block per frame where the policy says so).
  int64_t blocks_ = 0;
};

// After the last row: every grid and audio length must have been used.
absl::Status CheckMediaConsumed(const MediaInputs& media, const MediaCursor& cursor);

}  // namespace mrope

#endif  // MROPE_POSITIONS_SCANNER_H_
