#ifndef MROPE_POSITIONS_SPAN_H_
#define MROPE_POSITIONS_SPAN_H_

// A prompt as a sequence of spans. Runtimes that already know where media sit build spans
// directly; mrope/positions/scanner.h derives them from token ids + grids the way HF does.
//
// Families whose video frames are blocks of their own (PositionPolicy::video_frames_as_blocks:
// Qwen3-VL, GLM) take a video as one kVideo span per frame, grid (1, h, w), with the text
// between frames as kText spans. For GLM that is: Text(<|begin_of_video|> and what precedes
// it), then per frame Video({1, h, w}) (its <|begin_of_image|>/<|end_of_image|> are the span's
// markers) and Text(timestamp tokens), and <|end_of_video|> as text.

#include <cstdint>
#include <string>

namespace mrope {

// A media grid in patches before the spatial merge (as processors report image_grid_thw).
struct Grid {
  int64_t t = 0;
  int64_t h = 0;
  int64_t w = 0;
};

enum class SpanKind {
  kText,          // text_tokens ordinary tokens
  kImage,         // <vision_start> image tokens <vision_end>
  kVideo,         // <vision_start> video tokens <vision_end>
  kAudio,         // <audio_start> audio tokens <audio_end>              (Omni)
  kAudioInVideo,  // <vision_start><audio_start> video+audio <audio_end><vision_end> (Omni)
};

// One span. Media spans include their start/end marker tokens, so a span's token count is
// what it occupies in the sequence (see SpanTokenCount in sequence_positions.h).
struct Span {
  SpanKind kind = SpanKind::kText;
  int64_t text_tokens = 0;       // kText only
  Grid grid;                     // kImage, kVideo, kAudioInVideo
  // kVideo, kAudioInVideo: the value as given (processors give float32; HF truncates a
  // float64 or Python float in its own type, so it is held as a double).
  double seconds_per_grid = 1.0;
  int64_t audio_tokens = 0;      // kAudio, kAudioInVideo: tokens after the audio encoder
  // False when the prompt ends inside the block, before its end marker (an image block cut at
  // the end of a row). Only the last span of a sequence may be open.
  bool closed = true;
  // False for a block found as a run of mm_token_type_ids: its media tokens only, no start or
  // end marker of its own (the tokens around it are text spans).
  bool bracketed = true;

  static Span Text(int64_t tokens) {
    Span s;
    s.text_tokens = tokens;
    return s;
  }
  static Span Image(Grid grid) {
    Span s;
    s.kind = SpanKind::kImage;
    s.grid = grid;
    return s;
  }
  static Span Video(Grid grid, double seconds_per_grid) {
    Span s;
    s.kind = SpanKind::kVideo;
    s.grid = grid;
    s.seconds_per_grid = seconds_per_grid;
    return s;
  }
  static Span Audio(int64_t audio_tokens) {
    Span s;
    s.kind = SpanKind::kAudio;
    s.audio_tokens = audio_tokens;
    return s;
  }
  static Span AudioInVideo(Grid grid, double seconds_per_grid, int64_t audio_tokens) {
    Span s;
    s.kind = SpanKind::kAudioInVideo;
    s.grid = grid;
    s.seconds_per_grid = seconds_per_grid;
    s.audio_tokens = audio_tokens;
    return s;
  }
};

const char* SpanKindName(SpanKind kind);

}  // namespace mrope

#endif  // MROPE_POSITIONS_SPAN_H_
