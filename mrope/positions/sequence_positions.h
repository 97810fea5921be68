#ifndef MROPE_POSITIONS_SEQUENCE_POSITIONS_H_
#define MROPE_POSITIONS_SEQUENCE_POSITIONS_H_

// The M-RoPE positions of one sequence (one unpadded request), planned once from its spans. Any
// window [begin, end) of token indices can then be written without rebuilding the prompt:
// indices below num_tokens() are prompt tokens, indices at or beyond it are decode steps, which
// take index + delta() on all three axes.
//
// Planning costs O(spans + F + C) time and memory, independent of the tokens per frame and of the
// tokens of text, image, audio and video spans: F is the number of frames of audio-in-video
// blocks and C the number of interleaved chunks they are split into (Qwen2.5-Omni walks its
// chunks with a frame cursor; Qwen3-Omni's merge by time adds a binary search over the block's
// audio tokens per frame, O(F log audio tokens)). Fill costs O(end - begin + log spans).
//
// Positions follow HF transformers v4.57.6 get_rope_index bit for bit (see tests/golden):
// text continues at (max of the previous piece) + 1 on all axes; a vision block takes
// base + (time_index(k), row, col); Omni blocks add audio and audio-in-video interleaving.

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mrope/positions/limits.h"
#include "mrope/positions/model_config.h"
#include "mrope/positions/position_buffer.h"
#include "mrope/positions/span.h"

namespace mrope {

// Three output planes of equal length: positions on the t, h and w axes.
template <typename Out>
struct PositionPlanes {
  Out* t = nullptr;
  Out* h = nullptr;
  Out* w = nullptr;
};

// A contiguous run of tokens from one stream of an audio-in-video block, in sequence order.
struct InterleavedRun {
  InterleavedRun() = default;
  // For emplace_back: a run built on the stack and copied in stalls on store forwarding.
  InterleavedRun(bool video, int64_t b, int64_t e) : is_video(video), begin(b), end(e) {}

  bool is_video = false;
  int64_t begin = 0;  // index into that stream (video tokens are t-major, then row, then col)
  int64_t end = 0;
};

// A span with everything its positions derive from. Positions are stored as double, which
// holds every int64 position below 2^53 and every float32 position exactly.
struct PlacedSpan {
  PlacedSpan() = default;
  // The planner's start, built in place: a span at token `first` whose first position is
  // `start` (emplace_back() with no arguments zero-fills the whole struct with rep stos first,
  // which costs more than planning a text span).
  PlacedSpan(const Span& s, int64_t first, double start)
      : span(s), first_token(first), start_base(start) {}

  Span span;
  int64_t first_token = 0;  // index of the span's first token in the sequence
  int64_t num_tokens = 0;
  int32_t start_markers = 0;  // <vision_start> / <audio_start> tokens at the span's front
  int32_t end_markers = 0;    // <vision_end> / <audio_end> tokens at its back (0 when open)
  int64_t media_tokens = 0;   // tokens between the markers (video + audio for audio-in-video)
  Grid merged_grid;           // (t, h / merge, w / merge)
  double start_base = 0;      // text: first position; media: first start marker
  double media_base = 0;      // media tokens take media_base + (time, row, col)
  double end_base = 0;        // first end marker
  double max_position = 0;    // over the span's tokens and axes
  // Audio-in-video only: the token order, runs [first_run, end_run) of the sequence's runs()
  // (kept there, so that a PlacedSpan owns no memory: a plan's spans are cleared and copied
  // without a destructor call each).
  int64_t first_run = 0;
  int64_t end_run = 0;
};

class SequencePositions {
 public:
  // An empty sequence (no tokens) under the default config; Create and SequencePlanner::Plan
  // make real ones.
  SequencePositions() = default;

  // Plans `spans` under `config`. Refuses spans the family cannot have (audio in a VL model,
  // multi-frame Qwen3-VL video blocks, open blocks that are not last, ...), bad grids and
  // seconds, and anything over `limits`, before allocating.
  static absl::StatusOr<SequencePositions> Create(const ModelConfig& config,
                                                  absl::Span<const Span> spans,
                                                  const PositionLimits& limits = {});

  int64_t num_tokens() const { return num_tokens_; }
  // True for Qwen3-Omni: positions are float32 values (possibly fractional).
  bool float_positions() const { return float_positions_; }
  // Largest position over all tokens and axes (0 for an empty sequence).
  double max_position() const { return max_position_; }
  // Decode token i >= num_tokens() has position i + delta() on every axis (float32 addition for
  // float positions). delta = max_position + 1 - num_tokens.
  double delta() const { return delta_; }
  absl::Span<const PlacedSpan> spans() const { return spans_; }
  // The audio-in-video blocks' runs, block after block (see PlacedSpan::first_run).
  absl::Span<const InterleavedRun> runs() const { return runs_; }

  // Writes the positions of tokens [begin, end) into planes of end - begin entries each.
  // int32 output refuses values above INT32_MAX; integer outputs refuse fractional positions.
  template <typename Out>
  absl::Status Fill(int64_t begin, int64_t end, PositionPlanes<Out> out) const;

 private:
  friend class SequencePlanner;

  bool float_positions_ = false;
  PositionPolicy policy_;
  ModelConfig config_;
  PositionLimits limits_;
  int64_t num_tokens_ = 0;
  double max_position_ = 0;
  double delta_ = 0;
  // Inline room for a typical batch row (text, a media block, text): such rows allocate
  // nothing. No more: each slot makes every row of a batch plan 168 bytes larger, and the rows
  // are one allocation (room for 4 made the 64-row batch's plan 5% slower).
  absl::InlinedVector<PlacedSpan, 3> spans_;
  std::vector<InterleavedRun> runs_;
};

// Plans many sequences under one config (a batch's rows): the config is validated and its
// policy derived once, and each plan reuses the target's span storage.
class SequencePlanner {
 public:
  static absl::StatusOr<SequencePlanner> Create(const ModelConfig& config,
                                                const PositionLimits& limits = {});

  // Plans `spans` into `out` (its previous contents are replaced). Refuses what
  // SequencePositions::Create refuses; `out` is unspecified after an error.
  absl::Status Plan(absl::Span<const Span> spans, SequencePositions& out) const;

  // The config's policy (PolicyFor), derived once.
  const PositionPolicy& policy() const { return policy_; }
  // What Create validated.
  const ModelConfig& config() const { return config_; }
  const PositionLimits& limits() const { return limits_; }

 private:
  SequencePlanner(const ModelConfig& config, const PositionPolicy& policy,
                  const PositionLimits& limits)
      : config_(config), policy_(policy), limits_(limits) {}

  ModelConfig config_;
  PositionPolicy policy_;
  PositionLimits limits_;
};

// Declared for the three output types mrope supports.
extern template absl::Status SequencePositions::Fill<int64_t>(int64_t, int64_t,
                                                              PositionPlanes<int64_t>) const;
extern template absl::Status SequencePositions::Fill<int32_t>(int64_t, int64_t,
                                                              PositionPlanes<int32_t>) const;
extern template absl::Status SequencePositions::Fill<float>(int64_t, int64_t,
                                                            PositionPlanes<float>) const;

// Packs several sequences' prompt positions back to back: planar [3][total] with
// cu_seqlens = {0, n0, n0 + n1, ...} (the varlen layout of FlashAttention-style runtimes).
template <typename Out>
struct PackedPositions {
  PositionBuffer<Out> positions;  // [3][total] ([num_axes][total] of a batch: PackBatch)
  std::vector<int64_t> cu_seqlens;
  int64_t total_tokens = 0;
};
template <typename Out>
absl::StatusOr<PackedPositions<Out>> PackSequences(
    absl::Span<const SequencePositions> sequences, const PositionLimits& limits = {});

}  // namespace mrope

#endif  // MROPE_POSITIONS_SEQUENCE_POSITIONS_H_
