#include "mrope/positions/scanner.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mrope/common/status_macros.h"
#include "mrope/positions/scan_kernels.h"

namespace mrope {
namespace {

// The seconds-per-grid list the policy reads, and its request name; null for kNone.
const std::vector<double>* SecondsListOf(SecondsList list, const MediaInputs& media) {
  switch (list) {
    case SecondsList::kSecondPerGridTs:
      return &media.second_per_grid_ts;
    case SecondsList::kVideoSecondPerGrid:
      return &media.video_second_per_grid;
    case SecondsList::kNone:
      break;
  }
  return nullptr;
}

const char* SecondsListName(SecondsList list) {
  return list == SecondsList::kSecondPerGridTs ? "second_per_grid_ts" : "video_second_per_grid";
}

// The error of row `row` at token `index`: StrCat of `what` (taken by value: string literals
// decay, so call sites share instantiations). Out of line and cold, so that the checks calling
// it keep the small frames of the path valid prompts take: the formatting inlined into them gave
// every block's scan a prologue and a frame of several hundred bytes.
template <typename... What>
ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD absl::Status RowError(int64_t row, int64_t index,
                                                                  What... what) {
  return absl::InvalidArgumentError(absl::StrCat("row ", row, ", token ", index, ": ", what...));
}

class RowScanner {
 public:
  RowScanner(const ModelConfig& config, const PositionPolicy& policy, int64_t text_limit,
             const MergeDivisor& merge, absl::Span<const int64_t> tokens,
             const MediaInputs& media, MediaCursor& cursor, int64_t row,
             std::vector<Span>& spans)
      : config_(config),
        policy_(policy),
        text_limit_(text_limit),
        merge_(merge),
        ids_(config.tokens),
        tokens_(tokens),
        media_(media),
        cursor_(cursor),
        row_(row),
        spans_(spans) {}

  absl::Status Scan() {
    const int64_t n = tokens_.size();
    int64_t text_run = 0;
    for (int64_t i = 0; i < n;) {
      const int64_t text_begin = i;
      i = BelowRunEnd(tokens_, i, text_limit_);
      text_run += i - text_begin;
      if (i == n) break;
      const int64_t token = tokens_[i];
      MROPE_RETURN_IF_ERROR(CheckTokenId(i));
      int64_t consumed = 0;
      if (token == ids_.vision_start) {
        FlushText(text_run);
        MROPE_ASSIGN_OR_RETURN(consumed, ScanVisionBlock(i));
      } else if (policy_.has_audio && token == ids_.audio_start) {
        FlushText(text_run);
        MROPE_ASSIGN_OR_RETURN(consumed, ScanAudioBlock(i));
      } else if (bracketed_videos_ && (token == ids_.video_start || token == ids_.video_end)) {
        // The brackets are text; they only decide what the image tokens between them are.
        MROPE_RETURN_IF_ERROR(token == ids_.video_start ? OpenVideo(i) : CloseVideo(i));
        ++text_run;
        consumed = 1;
      } else if (bracketed_videos_ && token == ids_.video) {
        return RowError(row_, i, "video_token_id ", token,
                        " in the prompt: ", config_.rules->name,
                        " writes video frames with image_token_id ", ids_.image,
                        " between video_start and video_end");
      } else if (token == ids_.image || token == ids_.video ||
                 (policy_.has_audio && token == ids_.audio)) {
        return RowError(row_, i, "media token ", token,
                        " outside a block (no start marker before it)");
      } else {
        ++text_run;
        consumed = 1;
      }
      i += consumed;
    }
    FlushText(text_run);
    if (video_open_) MROPE_RETURN_IF_ERROR(CloseVideo(n));
    return absl::OkStatus();
  }

 private:
  void FlushText(int64_t& text_run) {
    if (text_run > 0) spans_.emplace_back() = Span::Text(text_run);
    text_run = 0;
  }

  // Ids are vocabulary indices. Every token is either in a text run (BelowRunEnd stops at a bad
  // id), equal to a marker, or where a run stopped: the scanner checks it there.
  absl::Status CheckTokenId(int64_t index) const {
    if (index >= static_cast<int64_t>(tokens_.size())) return absl::OkStatus();
    const int64_t id = tokens_[index];
    if (id >= 0 && id <= kMaxTokenId) return absl::OkStatus();
    return RowError(row_, index, "input_ids value ", id, " is not a token id (must be in [0, ",
                    kMaxTokenId, "])");
  }

  // Length of the run of `id` tokens from `begin`; the token that ends it must be a valid id.
  absl::StatusOr<int64_t> MediaRun(int64_t begin, int64_t id) const {
    const int64_t end = EqualRunEnd(tokens_, begin, id);
    MROPE_RETURN_IF_ERROR(CheckTokenId(end));
    return end - begin;
  }

  // Checks the end marker(s) at `at`; returns whether the block is closed.
  absl::StatusOr<bool> ExpectEnd(int64_t at, std::initializer_list<int64_t> markers,
                                 absl::string_view block) {
    const int64_t n = tokens_.size();
    if (at == n && !policy_.has_audio && markers.size() == 1) return false;  // open at row end
    int64_t i = at;
    for (const int64_t marker : markers) {
      if (i >= n || tokens_[i] != marker) {
        return RowError(row_, i, block, " block is not closed by its end marker ", marker,
                        i >= n ? " (row ends)" : absl::StrCat(" (found token ", tokens_[i], ")"));
      }
      ++i;
    }
    return true;
  }

  // `source` names where `expected` comes from: list[entry] plus a note (built only on error).
  absl::Status CheckCount(int64_t index, absl::string_view what, int64_t found,
                          int64_t expected, absl::string_view list, size_t entry,
                          absl::string_view note = "") {
    if (found == expected) return absl::OkStatus();
    return RowError(row_, index, what, " block has ", found, " tokens but ", list, "[", entry, "]",
                    note, " gives ", expected);
  }

  int64_t GridTokens(const Grid& g) const {
    return g.t * merge_.Quotient(g.h) * merge_.Quotient(g.w);
  }

  absl::Status CheckGrid(int64_t index, absl::string_view list, size_t at, const Grid& g) {
    if (g.t < 1 || g.h < 1 || g.w < 1) {
      return RowError(row_, index, list, "[", at, "] = [", g.t, ", ", g.h, ", ", g.w,
                      "] must be positive");
    }
    if (!merge_.Divides(g.h) || !merge_.Divides(g.w)) {
      return RowError(row_, index, list, "[", at, "] = [", g.t, ", ", g.h, ", ", g.w,
                      "]: h and w must be divisible by spatial_merge_size ",
                      config_.spatial_merge_size);
    }
    return absl::OkStatus();
  }

  double SecondsPerGrid(size_t video) const {
    // Fuzzer finding (tests/regression/positions_regression_test.cc): Qwen2-VL and Qwen3-VL
    // have no time scale, so ValidateMediaInputs does not check their seconds lists; indexing
    // one shorter than video_grid_thw read past its end. Those families ignore the lists.
    const std::vector<double>* list = SecondsListOf(policy_.seconds_list, media_);
    return list == nullptr || list->empty() ? 1.0 : (*list)[video];
  }

  // The block start marker as the family's config names it (vision_start, GLM's image_start);
  // for error messages only.
  absl::string_view StartName() const {
    return TokenName(*config_.rules, &SpecialTokens::vision_start);
  }

  // <vision_start> at `i`: an image, a video (frame), or an audio-in-video block.
  absl::StatusOr<int64_t> ScanVisionBlock(int64_t i) {
    const int64_t n = tokens_.size();
    if (i + 1 >= n) {
      return RowError(row_, i, "row ends in ", StartName(), " (a block with no media tokens)");
    }
    const int64_t next = tokens_[i + 1];
    if (next == ids_.image) return video_open_ ? ScanBracketedFrame(i) : ScanImage(i);
    if (next == ids_.video && !bracketed_videos_) return ScanVideo(i);
    if (policy_.has_audio && next == ids_.audio_start) return ScanAudioInVideo(i);
    return RowError(row_, i + 1, StartName(), " must be followed by an image",
                    bracketed_videos_ ? "" : " or video",
                    policy_.has_audio ? " token (or audio_start for audio-in-video)" : " token",
                    ", found ", next);
  }

  absl::StatusOr<int64_t> ScanImage(int64_t i) {
    if (cursor_.image >= media_.image_grid_thw.size()) {
      return RowError(row_, i, "image block ", cursor_.image + 1, " but image_grid_thw has ",
                      media_.image_grid_thw.size(), " entries");
    }
    const Grid& grid = media_.image_grid_thw[cursor_.image];
    MROPE_RETURN_IF_ERROR(CheckGrid(i, "image_grid_thw", cursor_.image, grid));
    MROPE_ASSIGN_OR_RETURN(const int64_t found, MediaRun(i + 1, ids_.image));
    MROPE_RETURN_IF_ERROR(
        CheckCount(i, "image", found, GridTokens(grid), "image_grid_thw", cursor_.image));
    MROPE_ASSIGN_OR_RETURN(const bool closed, ExpectEnd(i + 1 + found, {ids_.vision_end}, "image"));
    Span& span = spans_.emplace_back() = Span::Image(grid);
    span.closed = closed;
    ++cursor_.image;
    return 1 + found + (closed ? 1 : 0);
  }

  absl::StatusOr<int64_t> ScanVideo(int64_t i) {
    if (cursor_.video >= media_.video_grid_thw.size()) {
      return RowError(row_, i, "video block ", cursor_.video + 1, " but video_grid_thw has ",
                      media_.video_grid_thw.size(), " entries");
    }
    const size_t video = cursor_.video;
    const Grid& full = media_.video_grid_thw[video];
    // Once per video: the frames of a video share its grid.
    if (cursor_.video_frame == 0) {
      MROPE_RETURN_IF_ERROR(CheckGrid(i, "video_grid_thw", video, full));
    }
    Grid grid = full;
    MROPE_ASSIGN_OR_RETURN(const int64_t found, MediaRun(i + 1, ids_.video));
    if (policy_.video_frames_as_blocks) {
      grid.t = 1;  // each frame is its own block
      if (full.t > 1 && found == full.t * GridTokens(grid)) {
        return RowError(row_, i, "video_grid_thw[", video, "] (", full.t,
                        " frames) is written as one block; ", config_.rules->name,
                        " needs one <vision_start>...<vision_end> block per frame");
      }
    }
    MROPE_RETURN_IF_ERROR(CheckCount(i, "video", found, GridTokens(grid), "video_grid_thw", video,
                                     policy_.video_frames_as_blocks ? " (one frame)" : ""));
    MROPE_ASSIGN_OR_RETURN(const bool closed, ExpectEnd(i + 1 + found, {ids_.vision_end}, "video"));
    Span& span = spans_.emplace_back() = Span::Video(grid, SecondsPerGrid(video));
    span.closed = closed;
    if (!policy_.video_frames_as_blocks || ++cursor_.video_frame == full.t) {
      ++cursor_.video;
      cursor_.video_frame = 0;
    }
    return 1 + found + (closed ? 1 : 0);
  }

  // video_start at `i` (GLM): the image blocks up to video_end are the frames of the next video.
  absl::Status OpenVideo(int64_t i) {
    if (video_open_) {
      return RowError(row_, i, "video_start inside the video opened at token ", video_start_index_,
                      " (no video_end before it)");
    }
    if (cursor_.video >= media_.video_grid_thw.size()) {
      return RowError(row_, i, "video ", cursor_.video + 1, " but video_grid_thw has ",
                      media_.video_grid_thw.size(), " entries");
    }
    MROPE_RETURN_IF_ERROR(
        CheckGrid(i, "video_grid_thw", cursor_.video, media_.video_grid_thw[cursor_.video]));
    video_open_ = true;
    video_start_index_ = i;
    cursor_.video_frame = 0;
    return absl::OkStatus();
  }

  // video_end at `i`, or the row's end (i == n) inside a video. HF moves to the next video grid
  // after t frames, wherever the brackets are: a video given fewer frames would leave the later
  // videos of the batch read with the wrong grids (shape errors, or silently wrong positions
  // when the sizes match), so every video must have exactly its t frames.
  absl::Status CloseVideo(int64_t i) {
    if (!video_open_) {
      return RowError(row_, i, "video_end with no open video (no video_start before it)");
    }
    const Grid& grid = media_.video_grid_thw[cursor_.video];
    if (cursor_.video_frame != grid.t) {
      return RowError(
          row_, i,
          i == static_cast<int64_t>(tokens_.size()) ? "row ends inside" : "video_end closes",
          " the video opened at token ", video_start_index_, " after ", cursor_.video_frame,
          " frames, but video_grid_thw[", cursor_.video, "] has t = ", grid.t,
          " (HF would read the batch's later videos with shifted grids)");
    }
    video_open_ = false;
    ++cursor_.video;
    cursor_.video_frame = 0;
    return absl::OkStatus();
  }

  // <vision_start> image tokens [<vision_end>] inside an open video: its next frame (t = 1).
  absl::StatusOr<int64_t> ScanBracketedFrame(int64_t i) {
    const size_t video = cursor_.video;
    const Grid& full = media_.video_grid_thw[video];
    if (cursor_.video_frame == full.t) {
      return RowError(row_, i, "frame ", full.t + 1, " of the video opened at token ",
                      video_start_index_, ", but video_grid_thw[", video, "] has t = ", full.t);
    }
    Grid frame = full;
    frame.t = 1;
    MROPE_ASSIGN_OR_RETURN(const int64_t found, MediaRun(i + 1, ids_.image));
    MROPE_RETURN_IF_ERROR(CheckCount(i, "video frame", found, GridTokens(frame),
                                     "video_grid_thw", video, " (one frame)"));
    MROPE_ASSIGN_OR_RETURN(const bool closed,
                           ExpectEnd(i + 1 + found, {ids_.vision_end}, "video frame"));
    Span& span = spans_.emplace_back() = Span::Video(frame, SecondsPerGrid(video));
    span.closed = closed;
    ++cursor_.video_frame;
    return 1 + found + (closed ? 1 : 0);
  }

  absl::StatusOr<int64_t> NextAudioTokens(int64_t i) {
    if (cursor_.audio >= media_.audio_feature_lengths.size()) {
      return RowError(row_, i, "audio ", cursor_.audio + 1, " but audio_feature_lengths has ",
                      media_.audio_feature_lengths.size(), " entries");
    }
    const int64_t frames = media_.audio_feature_lengths[cursor_.audio];
    if (frames < 1) {
      return RowError(row_, i, "audio_feature_lengths[", cursor_.audio, "] must be >= 1, got ",
                      frames);
    }
    // HF raises on an audio the encoder turns into no token (Qwen2.5-Omni: 1 or 2 mel frames),
    // alone or inside a video; so does mrope, in both places.
    const int64_t tokens = AudioTokenCount(policy_.audio_length, frames);
    if (tokens < 1) {
      return RowError(row_, i, "audio_feature_lengths[", cursor_.audio, "] = ", frames,
                      " mel frames make ", tokens, " audio tokens; an audio needs at least one");
    }
    return tokens;
  }

  absl::StatusOr<int64_t> ScanAudioBlock(int64_t i) {
    MROPE_ASSIGN_OR_RETURN(const int64_t expected, NextAudioTokens(i));
    MROPE_ASSIGN_OR_RETURN(const int64_t found, MediaRun(i + 1, ids_.audio));
    MROPE_RETURN_IF_ERROR(
        CheckCount(i, "audio", found, expected, "audio_feature_lengths", cursor_.audio));
    MROPE_RETURN_IF_ERROR(ExpectEnd(i + 1 + found, {ids_.audio_end}, "audio").status());
    spans_.emplace_back() = Span::Audio(expected);
    ++cursor_.audio;
    return found + 2;
  }

  // <vision_start><audio_start> video and audio tokens <audio_end><vision_end>.
  absl::StatusOr<int64_t> ScanAudioInVideo(int64_t i) {
    if (!media_.use_audio_in_video) {
      return RowError(row_, i,
                      "audio-in-video block (vision_start, audio_start) but use_audio_in_video "
                      "is false");
    }
    if (cursor_.video >= media_.video_grid_thw.size()) {
      return RowError(row_, i, "video block ", cursor_.video + 1, " but video_grid_thw has ",
                      media_.video_grid_thw.size(), " entries");
    }
    const Grid& grid = media_.video_grid_thw[cursor_.video];
    MROPE_RETURN_IF_ERROR(CheckGrid(i, "video_grid_thw", cursor_.video, grid));
    MROPE_ASSIGN_OR_RETURN(const int64_t audio_tokens, NextAudioTokens(i));
    // The body alternates runs of video and audio tokens.
    int64_t body_end = i + 2;
    int64_t video_found = 0;
    while (true) {
      const int64_t video_end = EqualRunEnd(tokens_, body_end, ids_.video);
      const int64_t audio_end = EqualRunEnd(tokens_, video_end, ids_.audio);
      if (audio_end == body_end) break;
      video_found += video_end - body_end;
      body_end = audio_end;
    }
    MROPE_RETURN_IF_ERROR(CheckTokenId(body_end));
    const int64_t body = body_end - (i + 2);
    MROPE_RETURN_IF_ERROR(CheckCount(i, "audio-in-video video", video_found, GridTokens(grid),
                                     "video_grid_thw", cursor_.video));
    MROPE_RETURN_IF_ERROR(CheckCount(i, "audio-in-video audio", body - video_found, audio_tokens,
                                     "audio_feature_lengths", cursor_.audio));
    MROPE_RETURN_IF_ERROR(
        ExpectEnd(i + 2 + body, {ids_.audio_end, ids_.vision_end}, "audio-in-video").status());
    spans_.emplace_back() = Span::AudioInVideo(grid, SecondsPerGrid(cursor_.video), audio_tokens);
    ++cursor_.video;
    ++cursor_.audio;
    return body + 4;
  }

  friend class TypeRunScanner;

  const ModelConfig& config_;
  const PositionPolicy& policy_;
  const int64_t text_limit_;
  const MergeDivisor& merge_;
  const SpecialTokens& ids_;
  absl::Span<const int64_t> tokens_;
  const MediaInputs& media_;
  MediaCursor& cursor_;
  const int64_t row_;
  const bool bracketed_videos_ =
      policy_.video_marking == VideoMarking::kImageTokensInVideoBrackets;
  bool video_open_ = false;  // bracketed videos: between video_start and video_end
  int64_t video_start_index_ = 0;
  // Spans are assigned into place (spans_.emplace_back() = Span::Image(...)): push_back of a
  // Span built on the stack copied it with wide loads of its narrow stores, a store-forwarding
  // stall per block.
  std::vector<Span>& spans_;
};

// Blocks from mm_token_type_ids (BatchScanner::ScanRowByTypes), reusing RowScanner's grid and
// count checks.
class TypeRunScanner {
 public:
  TypeRunScanner(RowScanner& scan, absl::Span<const int64_t> types) : s_(scan), types_(types) {}

  absl::Status Scan() {
    if (s_.bracketed_videos_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "mm_token_type_ids: blocks from token types are not implemented for ",
          s_.config_.rules->name, "'s bracketed videos"));
    }
    const absl::Span<const int64_t> tokens = s_.tokens_;
    const int64_t n = tokens.size();
    int64_t text_run = 0;
    for (int64_t i = 0; i < n;) {
      const int64_t type = types_[i];
      MROPE_RETURN_IF_ERROR(s_.CheckTokenId(i));
      if (type == 0) {
        if (tokens[i] == s_.ids_.image || tokens[i] == s_.ids_.video) {
          return RowError(s_.row_, i, "token ", tokens[i], " is ",
                          tokens[i] == s_.ids_.image ? "an image" : "a video",
                          " token but mm_token_type_ids is 0 there");
        }
        ++text_run;
        ++i;
        continue;
      }
      if (type != 1 && type != 2) {
        return RowError(s_.row_, i, "mm_token_type_ids value ", type,
                        " must be 0 (text), 1 (image) or 2 (video)");
      }
      const int64_t end = EqualRunEnd(types_, i, type);
      const int64_t id = type == 1 ? s_.ids_.image : s_.ids_.video;
      const int64_t same = EqualRunEnd(tokens.first(end), i, id);
      if (same != end) {
        return RowError(s_.row_, same, "mm_token_type_ids is ", type, " (",
                        type == 1 ? "image" : "video", ") but the token is ", tokens[same],
                        ", not ", type == 1 ? "image_token_id " : "video_token_id ", id);
      }
      s_.FlushText(text_run);
      MROPE_RETURN_IF_ERROR(type == 1 ? ImageRun(i, end - i) : Video(i, end - i));
      i = end;
    }
    s_.FlushText(text_run);
    return absl::OkStatus();
  }

 private:
  // The run at `i` is the `next`-th of its kind: `list` must have an entry for it.
  absl::Status CheckListed(int64_t i, const char* kind, size_t next, const char* list,
                           size_t size) const {
    if (next < size) return absl::OkStatus();
    return RowError(s_.row_, i, kind, " run ", next + 1, " but ", list, " has ", size,
                    " entries");
  }

  // vLLM's images back to back, with no marker between them, are one run of image tokens
  // where blocks are the runs (Isaac): it takes image_grid_thw's grids in order until used up.
  absl::Status ImageRun(int64_t i, int64_t found) {
    if (!s_.policy_.blocks_from_media_runs || !s_.policy_.per_request) return Image(i, found);
    const std::vector<Grid>& grids = s_.media_.image_grid_thw;
    while (found > 0) {
      MROPE_RETURN_IF_ERROR(
          CheckListed(i, "image", s_.cursor_.image, "image_grid_thw", grids.size()));
      const Grid& grid = grids[s_.cursor_.image];
      MROPE_RETURN_IF_ERROR(s_.CheckGrid(i, "image_grid_thw", s_.cursor_.image, grid));
      const int64_t take = std::min(found, s_.GridTokens(grid));
      MROPE_RETURN_IF_ERROR(Image(i, take));
      i += take;
      found -= take;
    }
    return absl::OkStatus();
  }

  absl::Status Image(int64_t i, int64_t found) {
    MediaCursor& cursor = s_.cursor_;
    const std::vector<Grid>& grids = s_.media_.image_grid_thw;
    MROPE_RETURN_IF_ERROR(CheckListed(i, "image", cursor.image, "image_grid_thw", grids.size()));
    const Grid& grid = grids[cursor.image];
    MROPE_RETURN_IF_ERROR(s_.CheckGrid(i, "image_grid_thw", cursor.image, grid));
    MROPE_RETURN_IF_ERROR(
        s_.CheckCount(i, "image", found, s_.GridTokens(grid), "image_grid_thw", cursor.image));
    Span& span = s_.spans_.emplace_back() = Span::Image(grid);
    span.bracketed = false;
    ++cursor.image;
    return absl::OkStatus();
  }

  absl::Status Video(int64_t i, int64_t found) {
    MediaCursor& cursor = s_.cursor_;
    const std::vector<Grid>& grids = s_.media_.video_grid_thw;
    MROPE_RETURN_IF_ERROR(CheckListed(i, "video", cursor.video, "video_grid_thw", grids.size()));
    const size_t video = cursor.video;
    const Grid& full = grids[video];
    if (cursor.video_frame == 0) {
      MROPE_RETURN_IF_ERROR(s_.CheckGrid(i, "video_grid_thw", video, full));
    }
    const bool frames = s_.policy_.video_frames_as_blocks;
    Grid grid = full;
    if (frames) grid.t = 1;
    const int32_t merge_t = s_.config_.temporal_merge_size;
    if (grid.t % merge_t != 0) {
      return RowError(s_.row_, i, "video_grid_thw[", video, "] t = ", grid.t,
                      " is not divisible by temporal_merge_size ", merge_t);
    }
    Grid merged = grid;
    merged.t /= merge_t;
    MROPE_RETURN_IF_ERROR(s_.CheckCount(i, "video", found, s_.GridTokens(merged),
                                        "video_grid_thw", video, frames ? " (one frame)" : ""));
    Span& span = s_.spans_.emplace_back() = Span::Video(grid, s_.SecondsPerGrid(video));
    span.bracketed = false;
    if (!frames || ++cursor.video_frame == full.t) {
      ++cursor.video;
      cursor.video_frame = 0;
    }
    return absl::OkStatus();
  }

  RowScanner& s_;
  absl::Span<const int64_t> types_;
};

}  // namespace

absl::Status ValidateMediaInputs(const ModelConfig& config, const PositionPolicy& policy,
                                 const MediaInputs& media, const PositionLimits& limits) {
  // Fuzzer finding (tests/regression/positions_regression_test.cc): grid values straight from a
  // request overflowed int64 in the scanner's t * (h / m) * (w / m). Bounding them here, before
  // any row is scanned, by max_grid_value (at most 2^20: ValidatePositionLimits) keeps that
  // product below 2^60; values below 1 are reported per block.
  for (const auto& [name, grids] : {std::make_pair("image_grid_thw", &media.image_grid_thw),
                                    std::make_pair("video_grid_thw", &media.video_grid_thw)}) {
    for (size_t i = 0; i < grids->size(); ++i) {
      const Grid& g = (*grids)[i];
      for (const int64_t v : {g.t, g.h, g.w}) {
        if (v > limits.max_grid_value) {
          return absl::InvalidArgumentError(
              absl::StrCat(name, "[", i, "] = [", g.t, ", ", g.h, ", ", g.w, "]: ", v,
                           " exceeds max_grid_value = ", limits.max_grid_value));
        }
      }
    }
  }
  const SecondsList read = policy.seconds_list;
  if (read == SecondsList::kNone) return absl::OkStatus();
  const char* name = SecondsListName(read);
  const auto& list = *SecondsListOf(read, media);
  const SecondsList other_list = read == SecondsList::kSecondPerGridTs
                                     ? SecondsList::kVideoSecondPerGrid
                                     : SecondsList::kSecondPerGridTs;
  if (!SecondsListOf(other_list, media)->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(SecondsListName(other_list),
                                                   " is not read by ",
                                                   config.rules->name, "; use ",
                                                   name));
  }
  if (!list.empty() && list.size() != media.video_grid_thw.size()) {
    return absl::InvalidArgumentError(absl::StrCat(name, " has ", list.size(),
                                                   " entries but video_grid_thw has ",
                                                   media.video_grid_thw.size()));
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (!std::isfinite(list[i]) || list[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, "[", i, "] must be finite and >= 0, got ", list[i]));
    }
  }
  return absl::OkStatus();
}

BatchScanner::BatchScanner(const ModelConfig& config, const PositionPolicy& policy,
                           const MediaInputs& media)
    : config_(config), media_(media), policy_(policy), merge_(config.spatial_merge_size) {
  // The ids a row scan stops at are special tokens at the top of the vocabulary: every valid id
  // below the smallest one is plain text, so a text run is one range test per token
  // (BelowRunEnd also stops at an invalid id, which the scan then reports).
  const SpecialTokens& ids = config.tokens;
  text_limit_ = kMaxTokenId + 1;
  for (const int64_t id : {ids.image, ids.video, ids.vision_start, ids.audio, ids.audio_start,
                           ids.video_start, ids.video_end}) {
    if (id >= 0) text_limit_ = std::min(text_limit_, id);
  }
  blocks_ = media.image_grid_thw.size() + media.audio_feature_lengths.size();
  for (const Grid& grid : media.video_grid_thw) {
    // t is at most max_grid_value (ValidateMediaInputs); a t < 1 is reported by the scan.
    blocks_ += policy_.video_frames_as_blocks ? std::max<int64_t>(grid.t, 1) : 1;
  }
}

int64_t BatchScanner::MaxRowSpans(int64_t seq_len) const {
  // A text span before each block and one after the last; no more spans than tokens.
  return std::min(2 * blocks_ + 1, seq_len);
}

absl::Status BatchScanner::ScanRow(absl::Span<const int64_t> tokens, MediaCursor& cursor,
                                   int64_t row, std::vector<Span>& spans) const {
  return RowScanner(config_, policy_, text_limit_, merge_, tokens, media_, cursor, row, spans)
      .Scan();
}

absl::Status BatchScanner::ScanRowByTypes(absl::Span<const int64_t> tokens,
                                          absl::Span<const int64_t> types, MediaCursor& cursor,
                                          int64_t row, std::vector<Span>& spans) const {
  RowScanner scan(config_, policy_, text_limit_, merge_, tokens, media_, cursor, row, spans);
  return TypeRunScanner(scan, types).Scan();
}

absl::Status CheckMediaConsumed(const MediaInputs& media, const MediaCursor& cursor) {
  const auto left = [](const char* name, size_t used, size_t total) {
    return absl::InvalidArgumentError(absl::StrCat(name, " has ", total, " entries but the prompt ",
                                                   "uses ", used, " (", total - used,
                                                   " left over)"));
  };
  if (cursor.image < media.image_grid_thw.size()) {
    return left("image_grid_thw", cursor.image, media.image_grid_thw.size());
  }
  if (cursor.video < media.video_grid_thw.size()) {
    return left("video_grid_thw", cursor.video, media.video_grid_thw.size());
  }
  if (cursor.audio < media.audio_feature_lengths.size()) {
    return left("audio_feature_lengths", cursor.audio, media.audio_feature_lengths.size());
  }
  return absl::OkStatus();
}

}  // namespace mrope
