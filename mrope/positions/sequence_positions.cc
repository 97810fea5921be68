#include "mrope/positions/sequence_positions.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mrope/common/status_macros.h"
#include "mrope/positions/fill_kernels.h"
#include "mrope/positions/internal/pack_rows.h"
#include "mrope/positions/position_arithmetic.h"

namespace mrope {
namespace {

// The writers' typed form of AddPositions: int64 exact, float32 rounded once.
template <typename Scalar>
inline Scalar Add(Scalar a, Scalar b) {
  return a + b;  // float + float rounds once to float32 (built with -ffp-contract=off)
}

// std::trunc, exact for every double (NaN, infinities and -0.0 included), without the libm call
// the baseline x86-64 target makes for it (no SSE4.1 rounding): from 2^52 on doubles are
// integers, below it the int64 conversion truncates. Time indices are computed per frame.
inline double Trunc(double x) {
  return std::fabs(x) < 0x1p52 ? std::copysign(static_cast<double>(static_cast<int64_t>(x)), x)
                               : x;
}

// Time index of temporal grid k (as HF computes it; see TimeIndex in model_config.h). Inlined:
// the writer calls it once per frame, and a call per frame cost more than the switch.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline double TimeIndexValue(TimeIndex kind, int64_t k,
                                                          double seconds_per_grid,
                                                          const ModelConfig& config,
                                                          bool float_positions) {
  const float pips = static_cast<float>(config.position_id_per_seconds);
  switch (kind) {
    case TimeIndex::kFrame:
      return static_cast<double>(k);
    case TimeIndex::kZero:
      return 0;
    case TimeIndex::kScaledFrame: {
      const double t = static_cast<double>(k) * config.position_id_per_seconds;
      // Omni's get_llm_pos_ids_for_vision passes t through a float32 tensor; the integer
      // family then truncates it back.
      if (float_positions) return static_cast<float>(t);
      return Trunc(static_cast<float>(t));
    }
    case TimeIndex::kTruncateIntervalFirst:
      return Trunc(static_cast<double>(k) * Trunc(seconds_per_grid) * config.tokens_per_second);
    case TimeIndex::kScaleThenTruncate:
      return Trunc(static_cast<double>(k) *
                   (static_cast<double>(seconds_per_grid) * config.tokens_per_second));
    case TimeIndex::kSecondsTruncatedFloat32: {
      // HF: int64(f32) and back through f32, which is trunc() for every value int64 holds.
      // Fuzzer finding (tests/regression/positions_regression_test.cc): the int64 casts were
      // undefined for a huge seconds_per_grid; trunc() keeps such values, which max_position
      // then refuses.
      const float scaled = (static_cast<float>(k) * static_cast<float>(seconds_per_grid)) * pips;
      return Trunc(scaled);
    }
    case TimeIndex::kSecondsFloat32:
      return (static_cast<float>(k) * static_cast<float>(seconds_per_grid)) * pips;
  }
  return 0;
}

absl::Status SpanError(size_t index, const Span& span, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("span ", index, " (", SpanKindName(span.kind), "): ", what));
}

// The error for a grid value outside [1, max_grid_value]: the first such value. Out of line,
// so that the planner's check of valid grids is two comparisons (a loop over the {name, value}
// pairs stored them on the stack for every media span).
ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD absl::Status GridValueError(
    size_t index, const Span& span, const PositionLimits& limits) {
  const Grid& g = span.grid;
  for (const auto& [name, value] : {std::pair<const char*, int64_t>{"t", g.t}, {"h", g.h},
                                    {"w", g.w}}) {
    if (value < 1 || value > limits.max_grid_value) {
      return SpanError(index, span,
                       absl::StrCat("grid ", name, " must be in [1, max_grid_value = ",
                                    limits.max_grid_value, "], got ", value));
    }
  }
  return absl::OkStatus();
}

bool HasGrid(SpanKind kind) {
  return kind == SpanKind::kImage || kind == SpanKind::kVideo || kind == SpanKind::kAudioInVideo;
}

// Validates one span against the family and limits.
absl::Status ValidateSpan(size_t index, const Span& span, bool is_last, const ModelConfig& config,
                          const PositionPolicy& policy, const PositionLimits& limits) {
  if (span.kind == SpanKind::kText) {
    if (span.text_tokens < 0 || span.text_tokens > limits.max_tokens_per_row) {
      return SpanError(index, span,
                       absl::StrCat("text_tokens must be in [0, max_tokens_per_row = ",
                                    limits.max_tokens_per_row, "], got ", span.text_tokens));
    }
    return absl::OkStatus();
  }
  if (!span.closed && (!is_last || policy.has_audio)) {
    return SpanError(index, span,
                     policy.has_audio
                         ? "Omni blocks must be closed by their end marker"
                         : "only the last span of a sequence may be open (no end marker)");
  }
  if ((span.kind == SpanKind::kAudio || span.kind == SpanKind::kAudioInVideo) &&
      !policy.has_audio) {
    return SpanError(index, span,
                     absl::StrCat(config.rules->name, " has no audio"));
  }
  if (span.kind == SpanKind::kAudio || span.kind == SpanKind::kAudioInVideo) {
    // At least one token, alone or in a video, as HF requires (its encoder output for 1-2 mel
    // frames is empty, and get_rope_index raises).
    if (span.audio_tokens < 1 || span.audio_tokens > limits.max_grid_tokens) {
      return SpanError(index, span,
                       absl::StrCat("audio_tokens must be in [1, max_grid_tokens = ",
                                    limits.max_grid_tokens, "], got ",
                                    span.audio_tokens));
    }
  } else if (span.audio_tokens != 0) {
    // Fuzzer finding (tests/regression/positions_regression_test.cc): the planner counts
    // audio_tokens into every media span, so an image or video span carrying them got extra
    // tokens positioned past the end of its grid, above max_position().
    return SpanError(index, span,
                     absl::StrCat("audio_tokens must be 0 for an ", SpanKindName(span.kind),
                                  " span, got ", span.audio_tokens));
  }
  if (!HasGrid(span.kind)) return absl::OkStatus();
  const Grid& g = span.grid;
  if (std::min(g.t, std::min(g.h, g.w)) < 1 ||
      std::max(g.t, std::max(g.h, g.w)) > limits.max_grid_value) {
    return GridValueError(index, span, limits);
  }
  const MergeDivisor merge(config.spatial_merge_size);
  if (!merge.Divides(g.h) || !merge.Divides(g.w)) {
    return SpanError(index, span,
                     absl::StrCat("grid h and w must be divisible by spatial_merge_size ",
                                  config.spatial_merge_size, ", got h=", g.h, " w=", g.w));
  }
  // Each factor is <= max_grid_value <= 2^20 (ValidatePositionLimits), so the product is below
  // 2^60.
  const int64_t tokens = (span.kind == SpanKind::kVideo ? g.t / config.temporal_merge_size : g.t) *
                         merge.Quotient(g.h) * merge.Quotient(g.w);
  if (tokens > limits.max_grid_tokens) {
    return SpanError(index, span,
                     absl::StrCat("grid ", g.t, "x", g.h, "x", g.w, " makes ", tokens,
                                  " tokens, over max_grid_tokens = ", limits.max_grid_tokens));
  }
  if (span.kind != SpanKind::kImage &&
      (!std::isfinite(span.seconds_per_grid) || span.seconds_per_grid < 0)) {
    return SpanError(index, span,
                     absl::StrCat("seconds_per_grid must be finite and >= 0, got ",
                                  span.seconds_per_grid));
  }
  if (span.kind == SpanKind::kVideo && g.t % config.temporal_merge_size != 0) {
    return SpanError(index, span,
                     absl::StrCat("grid t must be divisible by temporal_merge_size ",
                                  config.temporal_merge_size, ", got t=", g.t));
  }
  if (span.kind == SpanKind::kVideo && policy.video_frames_as_blocks && g.t != 1) {
    return SpanError(
        index, span,
        absl::StrCat("a ", config.rules->name, " video is one block per frame; got ",
                     "one block of ", g.t,
                     " frames (HF would silently number frames 1.. as text)"));
  }
  if (span.kind == SpanKind::kVideo && policy.images_only) {
    return SpanError(index, span,
                     absl::StrCat("vLLM's ", config.rules->name,
                                  " code takes images only (a video raises there)"));
  }
  if (span.kind == SpanKind::kImage && policy.per_request && g.t != 1) {
    return SpanError(index, span,
                     absl::StrCat("vLLM admits images with t == 1 only, got t=", g.t));
  }
  return absl::OkStatus();
}

// Inline room for the chunks of a minute of video at Qwen2.5-Omni's 2 s per chunk.
using Boundaries = absl::InlinedVector<int64_t, 32>;

// HF's get_chunked_index: splits a non-decreasing index sequence into chunks of
// `tokens_per_chunk` position units; returns the chunk boundaries [b0=0, b1, ..., len]. HF walks
// the tokens and closes at most one chunk per token: chunk c closes at the first token after the
// previous boundary whose index reaches c * tokens_per_chunk. `first_reaching(from, x)` gives
// the first token >= from whose index is >= x (or length), so this costs O(chunks).
template <typename FirstReaching>
Boundaries ChunkBoundaries(int64_t length, int64_t tokens_per_chunk,
                           FirstReaching first_reaching) {
  Boundaries bounds = {0};
  int64_t from = 0;
  for (int64_t chunk = 1;; ++chunk) {
    // In double: exact for every product below 2^53, and no int64 overflow for large limits.
    const int64_t at = first_reaching(from, static_cast<double>(chunk) * tokens_per_chunk);
    if (at >= length) break;
    bounds.push_back(at);
    from = at + 1;
  }
  bounds.push_back(length);
  return bounds;
}

// Everything the planner and the writer need about a span's grid.
struct GridStream {
  const PlacedSpan* span;
  const ModelConfig* config;
  TimeIndex time_kind;
  bool float_positions;
  bool spatial_from_zero;  // PositionPolicy::spatial_from_zero

  // What the h and w axes add to the row and column.
  double SpatialBase() const { return spatial_from_zero ? 0 : span->media_base; }

  int64_t per_frame() const { return span->merged_grid.h * span->merged_grid.w; }
  ABSL_ATTRIBUTE_ALWAYS_INLINE double TimeAt(int64_t k) const {
    return TimeIndexValue(time_kind, k, span->span.seconds_per_grid, *config, float_positions);
  }
  // Max over axes of the whole grid: the last frame's time, the last row, the last column
  // (float32 addition is monotonic, so the max of the sums is the sum with the max).
  double FullMax() const {
    const Grid& g = span->merged_grid;
    const double side = static_cast<double>(std::max(g.h, g.w) - 1);
    return std::max(AddPositions(float_positions, span->media_base, TimeAt(g.t - 1)),
                    AddPositions(float_positions, SpatialBase(), side));
  }
  // Max over axes of the stream tokens [begin, end) (non-empty), in O(1).
  double MaxOver(int64_t begin, int64_t end) const {
    const int64_t w = span->merged_grid.w;
    const int64_t k_last = (end - 1) / per_frame();
    const int64_t first = begin % per_frame();
    const int64_t last = (end - 1) % per_frame();
    int64_t max_row = span->merged_grid.h - 1;
    int64_t max_col = w - 1;
    if (begin / per_frame() == k_last) {  // within one frame: rows first / w .. last / w
      max_row = last / w;
      if (first / w == max_row) max_col = last % w;
    }
    return std::max({AddPositions(float_positions, span->media_base, TimeAt(k_last)),
                     AddPositions(float_positions, SpatialBase(), static_cast<double>(max_row)),
                     AddPositions(float_positions, SpatialBase(), static_cast<double>(max_col))});
  }
  // The first stream token >= from whose time index is >= x, or the stream's length. Time
  // indices never decrease, so the frame cursor only moves forward over a block's calls.
  int64_t FirstReaching(int64_t from, double x, int64_t& frame_cursor) const {
    const int64_t frames = span->merged_grid.t;
    const int64_t k = from / per_frame();
    if (k >= frames) return from;
    if (TimeAt(k) >= x) return from;
    frame_cursor = std::max(frame_cursor, k + 1);
    while (frame_cursor < frames && TimeAt(frame_cursor) < x) ++frame_cursor;
    return frame_cursor * per_frame();
  }
};

// Orders an audio-in-video block's video and audio tokens as the family interleaves them:
// appends its runs to `runs` (the sequence's) and records their range in `placed`. Out of line:
// inlined, its chunk boundaries and searches took the registers of the planner's loop, whose
// running maximum then lived in memory (a store and a reload per span); the plans of Qwen3-VL's
// 81 spans and of the 64-row batch took 11-15% less time without it.
ABSL_ATTRIBUTE_NOINLINE void InterleaveAudioInVideo(const Span& span, const ModelConfig& config,
                                                    const PositionPolicy& policy,
                                                    const GridStream& video, PlacedSpan& placed,
                                                    std::vector<InterleavedRun>& runs) {
  const bool fp = policy.float_positions;
  const int64_t video_tokens = placed.media_tokens - span.audio_tokens;
  const auto audio_at = [&](int64_t j) {
    return AddPositions(fp, placed.media_base, static_cast<double>(j));
  };
  placed.first_run = runs.size();
  if (policy.audio_in_video == AudioInVideoOrder::kChunked) {
    const int64_t per_chunk =
        static_cast<int64_t>(config.position_id_per_seconds * config.seconds_per_chunk);
    int64_t frame_cursor = 0;
    const auto v_bounds = ChunkBoundaries(video_tokens, per_chunk, [&](int64_t from, double x) {
      return video.FirstReaching(from, x, frame_cursor);
    });
    // Audio token j has index j.
    const int64_t audio_tokens = span.audio_tokens;
    const auto a_bounds =
        ChunkBoundaries(audio_tokens, per_chunk, [audio_tokens](int64_t from, double x) {
          return x >= static_cast<double>(audio_tokens)
                     ? audio_tokens
                     : std::max(from, static_cast<int64_t>(std::ceil(x)));
        });
    // Video chunk c, then audio chunk c, while each stream has one.
    size_t r = runs.size();
    runs.resize(r + v_bounds.size() + a_bounds.size() - 2);
    for (size_t c = 0; c + 1 < std::max(v_bounds.size(), a_bounds.size()); ++c) {
      if (c + 1 < v_bounds.size()) runs[r++] = {true, v_bounds[c], v_bounds[c + 1]};
      if (c + 1 < a_bounds.size()) runs[r++] = {false, a_bounds[c], a_bounds[c + 1]};
    }
  } else {
    // Merge by T value, video first on ties; what remains is appended as one piece.
    int64_t v = 0;
    int64_t a = 0;
    const auto push = [&](bool is_video, int64_t b, int64_t e) {
      if (static_cast<int64_t>(runs.size()) > placed.first_run &&
          runs.back().is_video == is_video && runs.back().end == b) {
        runs.back().end = e;
      } else {
        runs.emplace_back(is_video, b, e);
      }
    };
    while (v < video_tokens && a < span.audio_tokens) {
      const int64_t k = v / video.per_frame();
      const double video_t = AddPositions(fp, placed.media_base, video.TimeAt(k));
      if (video_t <= audio_at(a)) {
        const int64_t frame_end = (k + 1) * video.per_frame();
        push(true, v, frame_end);
        v = frame_end;
      } else {
        // Audio positions never decrease: binary search the first at or past video_t.
        int64_t e = a;
        int64_t e_end = span.audio_tokens;
        while (e < e_end) {
          const int64_t mid = e + (e_end - e) / 2;
          if (audio_at(mid) < video_t) {
            e = mid + 1;
          } else {
            e_end = mid;
          }
        }
        push(false, a, e);
        a = e;
      }
    }
    // The remainder is its own piece (never merged with the run before it).
    if (v < video_tokens) runs.emplace_back(true, v, video_tokens);
    if (a < span.audio_tokens) runs.emplace_back(false, a, span.audio_tokens);
  }
  placed.end_run = runs.size();
}

// Keye (PositionPolicy::video_frames_stacked): each video block as its frames back to back,
// one unbracketed span each, its start and end markers as text tokens around them (they sit
// where the markers would: the first frame's start - 1, the last frame's max + 1).
std::vector<Span> StackedFrames(absl::Span<const Span> spans, const ModelConfig& config) {
  std::vector<Span> out;
  out.reserve(spans.size());
  for (const Span& span : spans) {
    const int64_t frames = span.grid.t / config.temporal_merge_size;
    if (span.kind != SpanKind::kVideo || frames <= 1) {
      out.push_back(span);
      continue;
    }
    if (span.bracketed) out.push_back(Span::Text(1));
    for (int64_t k = 0; k < frames; ++k) {
      Span& frame = out.emplace_back(span);
      frame.grid.t = config.temporal_merge_size;
      frame.bracketed = false;
      frame.closed = true;
    }
    if (span.bracketed && span.closed) out.push_back(Span::Text(1));
  }
  return out;
}

// The index of the last span with tokens (spans.size() when none has).
size_t LastSpanWithTokens(absl::Span<const Span> spans) {
  for (size_t i = spans.size(); i-- > 0;) {
    if (spans[i].kind != SpanKind::kText || spans[i].text_tokens > 0) return i;
  }
  return spans.size();
}

}  // namespace

absl::StatusOr<SequencePlanner> SequencePlanner::Create(const ModelConfig& config,
                                                        const PositionLimits& limits) {
  MROPE_RETURN_IF_ERROR(ValidateModelConfig(config));
  MROPE_RETURN_IF_ERROR(ValidatePositionLimits(limits));
  return SequencePlanner(config, PolicyFor(config), limits);
}

absl::StatusOr<SequencePositions> SequencePositions::Create(const ModelConfig& config,
                                                            absl::Span<const Span> spans,
                                                            const PositionLimits& limits) {
  MROPE_ASSIGN_OR_RETURN(const SequencePlanner planner, SequencePlanner::Create(config, limits));
  SequencePositions seq;
  MROPE_RETURN_IF_ERROR(planner.Plan(spans, seq));
  return seq;
}

absl::Status SequencePlanner::Plan(absl::Span<const Span> spans, SequencePositions& seq) const {
  const ModelConfig& config = config_;
  const PositionLimits& limits = limits_;
  const PositionPolicy& policy = policy_;
  seq.config_ = config;
  seq.limits_ = limits;
  seq.policy_ = policy;
  const bool fp = policy.float_positions;
  seq.float_positions_ = fp;
  seq.spans_.clear();
  seq.runs_.clear();

  for (size_t i = 0; i < spans.size(); ++i) {
    MROPE_RETURN_IF_ERROR(
        ValidateSpan(i, spans[i], i + 1 == spans.size(), config, policy, limits));
  }

  std::vector<Span> stacked;
  if (policy.video_frames_stacked) {
    stacked = StackedFrames(spans, config);
    spans = stacked;
  }
  // Isaac: the last span, if text after a block, resumes at that block's last t + 1.
  const size_t final_span =
      policy.final_text_after_last_time ? LastSpanWithTokens(spans) : spans.size();
  double after_last_time = -1;  // the last span's block's last t + 1; -1: it was text

  const MergeDivisor merge(config.spatial_merge_size);
  double next = 0;  // HF's st_idx: where the next piece starts
  double max_all = 0;
  int64_t token = 0;
  seq.spans_.reserve(spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    const Span& span = spans[i];
    if (span.kind == SpanKind::kText && span.text_tokens == 0) continue;
    if (i == final_span && span.kind == SpanKind::kText && after_last_time >= 0) {
      next = after_last_time;
    }
    // Built in place: a PlacedSpan assembled on the stack and moved in stalled on store
    // forwarding (its fields stored one by one, then copied in wider loads). token and next go
    // in as copies: emplace_back takes forwarding references, and their addresses kept both
    // running values in memory for the whole loop (a store and a reload per span).
    PlacedSpan& placed =
        seq.spans_.emplace_back(span, static_cast<int64_t>(token), static_cast<double>(next));
    if (span.kind == SpanKind::kText) {
      placed.num_tokens = span.text_tokens;
      placed.max_position =
          AddPositions(fp, next, static_cast<double>(span.text_tokens - 1));
      next = AddPositions(fp, next, static_cast<double>(span.text_tokens));
      after_last_time = -1;
    } else {
      const bool pair = span.kind == SpanKind::kAudioInVideo;
      placed.start_markers = !span.bracketed ? 0 : pair ? 2 : 1;
      placed.end_markers = span.closed && span.bracketed ? placed.start_markers : 0;
      const bool shared = pair && policy.audio_in_video_shares_markers;
      const int32_t start_extent = shared ? 1 : placed.start_markers;
      placed.media_base = AddPositions(fp, next, start_extent);
      placed.merged_grid = {span.kind == SpanKind::kVideo ? span.grid.t / config.temporal_merge_size
                                                          : span.grid.t,
                            merge.Quotient(span.grid.h), merge.Quotient(span.grid.w)};
      const int64_t video_tokens =
          HasGrid(span.kind) ? placed.merged_grid.t * placed.merged_grid.h * placed.merged_grid.w
                             : 0;
      placed.media_tokens = video_tokens + span.audio_tokens;
      const GridStream video{&placed, &config,
                             span.kind == SpanKind::kImage ? policy.image_time : policy.video_time,
                             fp, policy.spatial_from_zero};
      const auto audio_at = [&](int64_t j) {
        return AddPositions(fp, placed.media_base, static_cast<double>(j));
      };
      double media_max = placed.media_base;
      if (video_tokens > 0) media_max = video.FullMax();
      if (span.audio_tokens > 0) media_max = std::max(media_max, audio_at(span.audio_tokens - 1));
      double last_piece_max = media_max;
      if (pair) {
        InterleaveAudioInVideo(span, config, policy, video, placed, seq.runs_);
        const InterleavedRun& last = seq.runs_.back();
        last_piece_max = last.is_video ? video.MaxOver(last.begin, last.end)
                                       : audio_at(last.end - 1);
      }
      // Where the text after the block resumes (HF v5.15: start + the larger merged side).
      placed.end_base =
          policy.block_end == BlockEnd::kStartPlusLargerSide && !pair && video_tokens > 0
              ? AddPositions(fp, placed.media_base,
                             static_cast<double>(std::max(placed.merged_grid.h,
                                                          placed.merged_grid.w)))
              : AddPositions(fp, last_piece_max, 1);
      const int32_t end_extent = shared ? 1 : placed.end_markers;
      placed.num_tokens = placed.start_markers + placed.media_tokens + placed.end_markers;
      placed.max_position =
          placed.end_markers > 0
              ? std::max(media_max, AddPositions(fp, placed.end_base, end_extent - 1))
              : media_max;
      next = placed.end_markers > 0 ? AddPositions(fp, placed.end_base, end_extent)
                                    : placed.end_base;
      if (policy.final_text_after_last_time) {
        after_last_time =
            placed.end_markers > 0 || video_tokens == 0 || pair
                ? next
                : AddPositions(fp, AddPositions(fp, placed.media_base,
                                                video.TimeAt(placed.merged_grid.t - 1)),
                               1);
      }
    }
    max_all = std::max(max_all, placed.max_position);
    token += placed.num_tokens;
    if (token > limits.max_tokens_per_row) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sequence has more than max_tokens_per_row = ", limits.max_tokens_per_row,
          " tokens (", token, " after span ", i, ")"));
    }
  }
  if (max_all > static_cast<double>(limits.max_position)) {
    return absl::InvalidArgumentError(absl::StrCat("largest position ", max_all,
                                                   " exceeds max_position = ",
                                                   limits.max_position));
  }
  seq.num_tokens_ = token;
  seq.max_position_ = max_all;
  seq.delta_ = token == 0 ? 0
                          : AddPositions(fp, AddPositions(fp, max_all, 1),
                                         -static_cast<double>(token));
  return absl::OkStatus();
}

namespace {

// Plane runs in the output type. Integer outputs add in that type: Fill has checked that every
// value of the window fits it, so the sums are the int64 sums. Float output rounds once.
template <typename Scalar, typename Out>
void ConstantRun(Out* out, int64_t n, Scalar base, int64_t offset) {
  FillConstant(out, n, static_cast<Out>(Add(base, static_cast<Scalar>(offset))));
}
template <typename Scalar, typename Out>
void CountingRun(Out* out, int64_t n, Scalar base, int64_t offset) {
  if constexpr (std::is_floating_point<Scalar>::value) {
    FillCountingFloat32(out, n, base, offset);
  } else if constexpr (std::is_floating_point<Out>::value) {
    FillCounting(out, n, base + offset);
  } else {
    FillCounting(out, n, static_cast<Out>(base + offset));
  }
}

// `rows` whole rows of a grid frame from row first_row: h = base + row, w = base + col.
template <typename Scalar, typename Out>
void GridRowsRun(Out* h, Out* w, int64_t rows, int64_t width, Scalar base, int64_t first_row) {
  if constexpr (std::is_floating_point<Scalar>::value) {
    FillGridRowsFloat32(h, w, rows, width, first_row, base);
  } else if constexpr (std::is_floating_point<Out>::value) {
    FillGridRows(h, w, rows, width, first_row, base);
  } else {
    FillGridRows(h, w, rows, width, first_row, static_cast<Out>(base));
  }
}

// base + u on all axes for u in [lo, hi): each plane is computed, which costs fewer cycles
// than copying one plane into the others (stores only, no loads). Three calls, not a loop over
// {t, h, w}: GCC stored that list on the stack for every text span.
template <typename Scalar, typename Out>
void WriteLinear(Scalar base, int64_t lo, int64_t hi, PositionPlanes<Out> out) {
  CountingRun(out.t, hi - lo, base, lo);
  CountingRun(out.h, hi - lo, base, lo);
  CountingRun(out.w, hi - lo, base, lo);
}

// Writes positions of one placed span, tokens [lo, hi) of the span, at out + 0. Work per call is
// O(rows of one frame + frames), with one division; the rest is plane stores.
//
// Its methods are inlined into the fill loop (ABSL_ATTRIBUTE_ALWAYS_INLINE; GCC kept WriteGrid
// out of line). Between the kernels' streaming stores the store buffer is full, so each call's
// register saves and spills most likely waited on it (this VM has no counters to confirm):
// inlined, Qwen3-VL's fill (81 spans) took 9% less time, the 64-row batch's 6% less.
template <typename Scalar, typename Out>
class SpanWriter {
 public:
  // `runs`: the sequence's (SequencePositions::runs()).
  SpanWriter(const PlacedSpan& s, const InterleavedRun* runs, const ModelConfig& config,
             const PositionPolicy& policy)
      : s_(s),
        runs_(runs),
        stream_{&s, &config,
                s.span.kind == SpanKind::kImage ? policy.image_time : policy.video_time,
                policy.float_positions, policy.spatial_from_zero},
        shared_markers_(s.span.kind == SpanKind::kAudioInVideo &&
                        policy.audio_in_video_shares_markers) {}

  ABSL_ATTRIBUTE_ALWAYS_INLINE void Write(int64_t lo, int64_t hi, PositionPlanes<Out> out) const {
    if (s_.span.kind == SpanKind::kText) {
      WriteLinear(static_cast<Scalar>(s_.start_base), lo, hi, out);
      return;
    }
    if (lo == 0 && hi == s_.num_tokens &&
        (s_.span.kind == SpanKind::kImage || s_.span.kind == SpanKind::kVideo)) {
      WriteWholeGridSpan(out);
      return;
    }
    const int64_t media_begin = s_.start_markers;
    const int64_t media_end = media_begin + s_.media_tokens;
    int64_t u = lo;
    int64_t o = 0;
    for (; u < std::min(hi, media_begin); ++u, ++o) Put(out, o, Marker(s_.start_base, u));
    const int64_t m_lo = std::max(u, media_begin);
    const int64_t m_hi = std::min(hi, media_end);
    if (m_lo < m_hi) {
      WriteMedia(m_lo - media_begin, m_hi - media_begin, Offset(out, o));
      o += m_hi - m_lo;
      u = m_hi;
    }
    for (; u < hi; ++u, ++o) Put(out, o, Marker(s_.end_base, u - media_end));
  }

 private:
  static PositionPlanes<Out> Offset(PositionPlanes<Out> p, int64_t o) {
    return {p.t + o, p.h + o, p.w + o};
  }
  static void Put(PositionPlanes<Out> p, int64_t o, Scalar v) {
    p.t[o] = p.h[o] = p.w[o] = static_cast<Out>(v);
  }
  Scalar Marker(double base, int64_t j) const {
    return shared_markers_ ? static_cast<Scalar>(base)
                           : Add(static_cast<Scalar>(base), static_cast<Scalar>(j));
  }
  // An image or video span written whole (every span inside a window): its markers and whole
  // frames, without WriteGrid's window arithmetic (3-4% less time for Qwen3-VL's and the
  // batch's fills).
  ABSL_ATTRIBUTE_ALWAYS_INLINE void WriteWholeGridSpan(PositionPlanes<Out> out) const {
    int64_t o = 0;
    for (int32_t j = 0; j < s_.start_markers; ++j, ++o) Put(out, o, Marker(s_.start_base, j));
    const Scalar base = static_cast<Scalar>(s_.media_base);
    const Scalar spatial = static_cast<Scalar>(stream_.SpatialBase());
    const int64_t per_frame = stream_.per_frame();
    for (int64_t k = 0; k < s_.merged_grid.t; ++k, o += per_frame) {
      FillConstant(out.t + o, per_frame, TimeValue(base, k));
      GridRowsRun(out.h + o, out.w + o, s_.merged_grid.h, s_.merged_grid.w, spatial, 0);
    }
    for (int32_t j = 0; j < s_.end_markers; ++j, ++o) Put(out, o, Marker(s_.end_base, j));
  }
  // The t plane's value in frame k.
  ABSL_ATTRIBUTE_ALWAYS_INLINE Out TimeValue(Scalar base, int64_t k) const {
    return static_cast<Out>(Add(base, static_cast<Scalar>(stream_.TimeAt(k))));
  }
  // Media-local tokens [lo, hi): a grid stream, an audio stream, or their interleaving.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void WriteMedia(int64_t lo, int64_t hi,
                                               PositionPlanes<Out> out) const {
    switch (s_.span.kind) {
      case SpanKind::kAudio:
        WriteLinear(static_cast<Scalar>(s_.media_base), lo, hi, out);
        return;
      case SpanKind::kAudioInVideo: {
        int64_t run_start = 0;  // media-local index of the current run's first token
        for (const InterleavedRun* run = runs_ + s_.first_run; run != runs_ + s_.end_run; ++run) {
          const int64_t run_len = run->end - run->begin;
          const int64_t a = std::max(lo, run_start);
          const int64_t b = std::min(hi, run_start + run_len);
          if (a < b) {
            const int64_t from = run->begin + (a - run_start);
            const auto dst = Offset(out, a - lo);
            if (run->is_video) {
              WriteGrid(from, from + (b - a), dst);
            } else {
              WriteLinear(static_cast<Scalar>(s_.media_base), from, from + (b - a), dst);
            }
          }
          run_start += run_len;
          if (run_start >= hi) break;
        }
        return;
      }
      default:
        WriteGrid(lo, hi, out);
    }
  }

  // Grid tokens [lo, hi) in t-major, row, col order: (base + time(k), spatial + row,
  // spatial + col), spatial being the base or 0 (GridStream::SpatialBase).
  ABSL_ATTRIBUTE_ALWAYS_INLINE void WriteGrid(int64_t lo, int64_t hi,
                                              PositionPlanes<Out> out) const {
    const Scalar base = static_cast<Scalar>(s_.media_base);
    const Scalar spatial = static_cast<Scalar>(stream_.SpatialBase());
    const int64_t per_frame = stream_.per_frame();
    int64_t k = lo == 0 ? 0 : lo / per_frame;  // (a division costs as much as a short row)
    int64_t r = lo - k * per_frame;           // token within frame k
    for (int64_t o = 0; o < hi - lo; ++k, r = 0) {
      const int64_t n = std::min(per_frame - r, hi - lo - o);
      const PositionPlanes<Out> dst = Offset(out, o);
      FillConstant(dst.t, n, TimeValue(base, k));
      WriteRows(spatial, r, n, dst.h, dst.w);
      o += n;
    }
  }

  // The h and w planes of frame tokens [r, r + n): per row, base + row and base + col. Whole
  // rows go to one kernel call; only a window's cut rows at either end are written alone.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void WriteRows(Scalar base, int64_t r, int64_t n, Out* h,
                                              Out* w) const {
    const int64_t width = s_.merged_grid.w;
    if (r == 0 && n == stream_.per_frame()) {  // a whole frame, without divisions
      GridRowsRun(h, w, s_.merged_grid.h, width, base, 0);
      return;
    }
    int64_t row = r / width;
    const int64_t first_col = r - row * width;
    int64_t o = 0;
    if (first_col != 0) {  // the cut head of a row
      o = std::min(width - first_col, n);
      ConstantRun(h, o, base, row);
      CountingRun(w, o, base, first_col);
      ++row;
    }
    const int64_t rows = (n - o) / width;
    GridRowsRun(h + o, w + o, rows, width, base, row);
    o += rows * width;
    ConstantRun(h + o, n - o, base, row + rows);  // the cut tail of a row
    CountingRun(w + o, n - o, base, 0);
  }

  const PlacedSpan& s_;
  const InterleavedRun* runs_;  // the sequence's
  GridStream stream_;
  bool shared_markers_;
};

template <typename Scalar, typename Out>
void FillImpl(const SequencePositions& seq, const ModelConfig& config,
              const PositionPolicy& policy, int64_t begin, int64_t end, PositionPlanes<Out> out) {
  const absl::Span<const PlacedSpan> spans = seq.spans();
  const int64_t num_tokens = seq.num_tokens();
  // First span that ends after `begin`.
  auto it = std::upper_bound(spans.begin(), spans.end(), begin,
                             [](int64_t token, const PlacedSpan& s) {
                               return token < s.first_token + s.num_tokens;
                             });
  int64_t i = begin;
  for (; it != spans.end() && i < std::min(end, num_tokens); ++it) {
    const int64_t lo = i - it->first_token;
    const int64_t hi = std::min(end, it->first_token + it->num_tokens) - it->first_token;
    SpanWriter<Scalar, Out>(*it, seq.runs().data(), config, policy)
        .Write(lo, hi, {out.t + (i - begin), out.h + (i - begin), out.w + (i - begin)});
    i += hi - lo;
  }
  // Decode steps: index + delta on every axis.
  if (i == end) return;
  WriteLinear(static_cast<Scalar>(seq.delta()), i, end,
              PositionPlanes<Out>{out.t + (i - begin), out.h + (i - begin), out.w + (i - begin)});
}

}  // namespace

template <typename Out>
absl::Status SequencePositions::Fill(int64_t begin, int64_t end, PositionPlanes<Out> out) const {
  if (begin < 0 || end < begin) {
    return absl::InvalidArgumentError(
        absl::StrCat("window [", begin, ", ", end, ") must satisfy 0 <= begin <= end"));
  }
  if (end - num_tokens_ > limits_.max_decode_steps) {
    return absl::InvalidArgumentError(
        absl::StrCat("window end ", end, " is more than max_decode_steps = ",
                     limits_.max_decode_steps, " past the prompt's ", num_tokens_, " tokens"));
  }
  if (begin == end) return absl::OkStatus();
  if (std::is_integral<Out>::value && float_positions_) {
    return absl::InvalidArgumentError(
        "this model's positions are float32 (Qwen3-Omni); request float output");
  }
  // Largest value the window can hold: the prompt's max, or the last decode step.
  const double window_max =
      std::max(begin < num_tokens_ ? max_position_ : 0.0,
               end > num_tokens_ ? static_cast<double>(end - 1) + delta_ : 0.0);
  if (window_max > static_cast<double>(std::numeric_limits<Out>::max())) {
    return absl::OutOfRangeError(absl::StrCat("position ", window_max,
                                              " does not fit the requested output type"));
  }
  // Float positions reach float output only (refused above for integer outputs).
  if constexpr (std::is_floating_point<Out>::value) {
    if (float_positions_) {
      FillImpl<float, Out>(*this, config_, policy_, begin, end, out);
      return absl::OkStatus();
    }
  }
  FillImpl<int64_t, Out>(*this, config_, policy_, begin, end, out);
  return absl::OkStatus();
}

template absl::Status SequencePositions::Fill<int64_t>(int64_t, int64_t,
                                                       PositionPlanes<int64_t>) const;
template absl::Status SequencePositions::Fill<int32_t>(int64_t, int64_t,
                                                       PositionPlanes<int32_t>) const;
template absl::Status SequencePositions::Fill<float>(int64_t, int64_t,
                                                     PositionPlanes<float>) const;

template <typename Out>
absl::StatusOr<PackedPositions<Out>> PackSequences(absl::Span<const SequencePositions> sequences,
                                                   const PositionLimits& limits) {
  return internal::PackRows<Out>(
      static_cast<int64_t>(sequences.size()), 3,
      [&](int64_t i) { return sequences[i].num_tokens(); },
      [&](int64_t i, Out* out, int64_t axis_stride) {
        return sequences[i].Fill<Out>(0, sequences[i].num_tokens(),
                                      {out, out + axis_stride, out + 2 * axis_stride});
      },
      limits);
}

template absl::StatusOr<PackedPositions<int64_t>> PackSequences<int64_t>(
    absl::Span<const SequencePositions>, const PositionLimits&);
template absl::StatusOr<PackedPositions<int32_t>> PackSequences<int32_t>(
    absl::Span<const SequencePositions>, const PositionLimits&);
template absl::StatusOr<PackedPositions<float>> PackSequences<float>(
    absl::Span<const SequencePositions>, const PositionLimits&);

}  // namespace mrope
