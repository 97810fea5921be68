#include "mrope/service/explain.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mrope/common/json_writer.h"
#include "mrope/common/status_macros.h"
#include "mrope/model/model_family.h"
#include "mrope/positions/sequence_positions.h"
#include "mrope/positions/sequential_grid.h"

namespace mrope {
namespace {

constexpr int64_t kMaxFramesListed = 16;

// A position as integer, or as the shortest float32 that reads back (Qwen3-Omni).
template <typename Out>
std::string Num(Out value) {
  std::string out;
  AppendJsonNumber(value, out);
  return out;
}

template <typename Out>
std::string Range(Out lo, Out hi) {
  return lo == hi ? Num(lo) : absl::StrCat(Num(lo), "..", Num(hi));
}

// Positions of tokens [begin, end) of `seq`, planar [3][end - begin].
template <typename Out>
absl::StatusOr<std::vector<Out>> Positions(const SequencePositions& seq, int64_t begin,
                                           int64_t end) {
  const int64_t n = end - begin;
  std::vector<Out> out(3 * n);
  MROPE_RETURN_IF_ERROR(seq.Fill<Out>(begin, end, {out.data(), out.data() + n, out.data() + 2 * n}));
  return out;
}

std::string GridText(const Grid& g) { return absl::StrCat(g.t, "x", g.h, "x", g.w); }

// Families that write every video frame as its own block (Qwen3-VL, GLM) show "video frame".
std::string KindText(const Span& span, const PositionPolicy& policy) {
  std::string kind = span.kind == SpanKind::kVideo &&
                             (policy.video_frames_as_blocks || policy.video_frames_stacked)
                         ? "video frame"
                         : SpanKindName(span.kind);
  if (!span.closed) kind += " (open)";
  return kind;
}

template <typename Out>
absl::Status ExplainRow(const SequencePositions& seq, const PositionPolicy& policy,
                        std::string& out) {
  out += absl::StrFormat("  %-4s %-22s %-13s %-11s %-9s %-7s %-17s %-17s %-17s %s\n", "span",
                         "kind", "tokens", "grid", "merged", "s/grid", "t", "h", "w", "next");
  const auto& spans = seq.spans();
  for (size_t i = 0; i < spans.size(); ++i) {
    const PlacedSpan& p = spans[i];
    const Span& s = p.span;
    const bool media = s.kind != SpanKind::kText;
    const int64_t media_begin = p.first_token + p.start_markers;
    const int64_t media_end = p.first_token + p.num_tokens - p.end_markers;
    const int64_t begin = media && media_end > media_begin ? media_begin : p.first_token;
    const int64_t end = media && media_end > media_begin ? media_end : p.first_token + p.num_tokens;
    std::string ranges[3];
    if (end > begin) {
      MROPE_ASSIGN_OR_RETURN(const std::vector<Out> pos, Positions<Out>(seq, begin, end));
      const int64_t n = end - begin;
      for (int axis = 0; axis < 3; ++axis) {
        const auto first = pos.begin() + axis * n;
        const auto [lo, hi] = std::minmax_element(first, first + n);
        ranges[axis] = Range(*lo, *hi);
      }
    }
    const int64_t after = p.first_token + p.num_tokens;
    MROPE_ASSIGN_OR_RETURN(const std::vector<Out> next, Positions<Out>(seq, after, after + 1));
    const bool has_grid = s.kind == SpanKind::kImage || s.kind == SpanKind::kVideo ||
                          s.kind == SpanKind::kAudioInVideo;
    const bool has_seconds = policy.seconds_list != SecondsList::kNone &&
                             (s.kind == SpanKind::kVideo || s.kind == SpanKind::kAudioInVideo);
    std::string kind = KindText(s, policy);
    if (s.kind == SpanKind::kAudio || s.kind == SpanKind::kAudioInVideo) {
      absl::StrAppend(&kind, " ", s.audio_tokens, " aud");
    }
    out += absl::StrFormat(
        "  %-4d %-22s %-13s %-11s %-9s %-7s %-17s %-17s %-17s %s\n", i, kind,
        Range(p.first_token, after - 1), has_grid ? GridText(s.grid) : "-",
        has_grid ? GridText(p.merged_grid) : "-",
        has_seconds ? absl::StrCat(s.seconds_per_grid) : "-", ranges[0], ranges[1], ranges[2],
        next[0] == next[1] && next[1] == next[2]
            ? Num(next[0])
            : absl::StrCat("(", Num(next[0]), ", ", Num(next[1]), ", ", Num(next[2]), ")"));
    if (s.kind == SpanKind::kVideo && p.merged_grid.t > 1) {
      const int64_t frame_tokens = p.merged_grid.h * p.merged_grid.w;
      const int64_t frames = std::min<int64_t>(p.merged_grid.t, kMaxFramesListed);
      std::vector<std::string> times;
      for (int64_t k = 0; k < frames && media_begin + k * frame_tokens < media_end; ++k) {
        const int64_t token = media_begin + k * frame_tokens;
        MROPE_ASSIGN_OR_RETURN(const std::vector<Out> t, Positions<Out>(seq, token, token + 1));
        times.push_back(Num(t[0]));
      }
      if (p.merged_grid.t > frames) times.push_back("...");
      absl::StrAppend(&out, "         t of each temporal grid: ", absl::StrJoin(times, ", "),
                      "\n");
    }
  }
  return absl::OkStatus();
}

// The model parameters that shape video and audio time positions.
std::string TimeScale(const ModelConfig& config) {
  const PositionPolicy policy = PolicyFor(config);
  if (UsesTokensPerSecond(policy)) {
    const bool interval_first = policy.video_time == TimeIndex::kTruncateIntervalFirst;
    return absl::StrCat(" (video t = ", interval_first ? "k * trunc(s/grid) * " : "trunc(k * s/grid * ",
                        config.tokens_per_second, interval_first ? "" : ")",
                        " for temporal grid k)");
  }
  if (UsesPositionIdPerSeconds(policy)) {
    return absl::StrCat(" (", config.position_id_per_seconds, " positions per second)");
  }
  if (policy.video_marking == VideoMarking::kImageTokensInVideoBrackets) {
    return " (each video frame is a block at t = its start; time shows only as text between frames)";
  }
  if (policy.spatial_from_zero) {
    return absl::StrCat(" (an image's h and w are its row and column, t its start",
                        policy.final_text_after_last_time
                            ? "; text after the last image resumes at its t + 1)"
                            : ")");
  }
  if (policy.video_frames_stacked) {
    return " (a video's frames are blocks back to back, each at the previous frame's max + 1)";
  }
  if (policy.vllm_frame_separator_tokens > 0) {
    return absl::StrCat(" (each video frame is a block at t = its start, ",
                        policy.vllm_frame_separator_tokens, " text tokens between frames)");
  }
  return "";
}

// Where generation continues after row `row`, with what the conventions that differ from the
// config's would do where that matters: per axis (HF v5 generate()) after a prompt that ends
// inside a block, against the cache + delta conventions (HF v4, vLLM); a delta clamped at 0.
template <typename Out>
std::string Continuation(const BatchPlan& plan, const PositionPolicy& policy, int64_t row) {
  const SequencePositions& seq = plan.rows[row];
  const RowLayout& layout = plan.layouts[row];
  const auto num = [](double v) { return Num(static_cast<Out>(v)); };
  std::string out;
  switch (plan.decode) {
    case DecodeRule::kPerAxisFromLast: {
      const std::array<double, 3>& last = layout.last_column;
      out = absl::StrCat("(", num(last[0] + 1), ", ", num(last[1] + 1), ", ", num(last[2] + 1),
                         ") (t, h, w)");
      if (last[0] != last[1] || last[1] != last[2]) {
        absl::StrAppend(&out, "; the prompt ends inside a block: hf_v4 and vllm continue at ",
                        num(seq.max_position() + 1), " on all axes");
      }
      break;
    }
    case DecodeRule::kTargetGridTable:
      out = absl::StrCat("the table of ", layout.target_grids.size(),
                         " target grid(s) from ", layout.decode_offset);
      break;
    case DecodeRule::kCachePlusDelta:
      out = num(static_cast<double>(layout.decode_offset) + layout.decode_delta);
      break;
  }
  const double unclamped = seq.max_position() + 1 - static_cast<double>(plan.seq_len);
  if (policy.clamp_delta && unclamped < 0) {
    absl::StrAppend(&out, "; the delta ", num(unclamped),
                    " is clamped at 0 (transformers v5.2.0; hf_v4 keeps it)");
  }
  return out;
}

template <typename Out>
absl::StatusOr<std::string> Explain(const ModelConfig& config, const BatchPlan& plan) {
  const PositionPolicy policy = PolicyFor(config);
  std::string out = absl::StrCat(config.rules->name, " under ",
                                 ConventionRulesOf(config.convention).name, TimeScale(config),
                                 ": ", plan.batch_size, plan.batch_size == 1 ? " row" : " rows",
                                 " of ", plan.seq_len, " columns\n", "prompt layout: ",
                                 ProcessorLayoutText(FamilyOf(config).processor), "\n");
  if (plan.text_only_path) {
    out += "no image or video grid in the batch: HF numbers tokens cumsum(mask) - 1\n";
  }
  out += "  tokens: the span's token indices, start/end markers included\n"
         "  t, h, w: position ranges of its media tokens (markers excluded)\n"
         "  next: the position of the token after the span\n";
  for (int64_t row = 0; row < plan.batch_size; ++row) {
    const SequencePositions& seq = plan.rows[row];
    const RowLayout& layout = plan.layouts[row];
    absl::StrAppend(&out, "\nrow ", row, ": ", seq.num_tokens(), " tokens",
                    seq.num_tokens() < plan.seq_len
                        ? absl::StrCat(" + ", plan.seq_len - seq.num_tokens(), " padding")
                        : "",
                    ", max position ", Num(static_cast<Out>(seq.max_position())),
                    ", mrope_position_delta ", Num(static_cast<Out>(layout.delta)),
                    ", generation continues at ", Continuation<Out>(plan, policy, row), "\n");
    MROPE_RETURN_IF_ERROR(ExplainRow<Out>(seq, policy, out));
  }
  return out;
}

// PositionScheme::kSequentialGrid: each row's length, delta and continuation, and its images
// with the axes their grid tokens take.
std::string ExplainSequentialGrid(const ModelConfig& config, const BatchPlan& plan) {
  const SequentialGridPositions& grid = *plan.sequential_grid;
  const int32_t axes = grid.num_axes;
  std::string out = absl::StrCat(
      config.rules->name, " under ", ConventionRulesOf(config.convention).name, ": ",
      plan.batch_size, plan.batch_size == 1 ? " row" : " rows", " of ", plan.seq_len,
      " columns, ", axes, " axes\nprompt layout: ",
      ProcessorLayoutText(FamilyOf(config).processor),
      "\n  every real token takes its index on every axis; an image's grid tokens take "
      "(column, row, image) on axes ", axes - 3, ", ", axes - 2, ", ", axes - 1, "\n");
  const int64_t b = plan.batch_size;
  const int64_t l = plan.seq_len;
  for (int64_t row = 0; row < b; ++row) {
    std::vector<std::string> next;
    for (int32_t a = 0; a < axes; ++a) {
      next.push_back(absl::StrCat(grid.positions[(a * b + row) * l + l - 1] + 1));
    }
    absl::StrAppend(&out, "\nrow ", row, ": mrope_position_delta ", plan.layouts[row].delta,
                    ", generation continues at (", absl::StrJoin(next, ", "), ")\n");
    for (size_t i = 0; i < grid.images.size(); ++i) {
      const GridImage& image = grid.images[i];
      if (image.row != row) continue;
      const int64_t grid_tokens = image.grid_rows * image.grid_columns;
      absl::StrAppend(&out, "  image ", i, ": tokens ", image.first, "..", image.end - 1,
                      image.end - image.first > grid_tokens ? " (begin and end keep their index)"
                                                            : "",
                      ", grid ", image.grid_rows, " rows x ", image.grid_columns,
                      " columns (separator included): columns 0..", image.grid_columns - 1,
                      ", rows 0..", image.grid_rows - 1, ", image ", i, "\n");
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> ExplainPlan(const ModelConfig& config, const BatchPlan& plan) {
  if (plan.evs != nullptr) {
    const VllmEvsPositions& evs = *plan.evs;
    std::string out = absl::StrCat(
        config.rules->name, ": a vLLM request with EVS-pruned videos (Model Runner V2), ",
        evs.num_tokens(), " tokens, mrope_position_delta ", evs.delta(),
        ", generation continues at ", evs.num_tokens() + evs.delta(), "\n");
    if (evs.vllm_defects().empty()) out += "vLLM computes the same positions\n";
    for (const VllmDefect& d : evs.vllm_defects()) {
      absl::StrAppend(&out, "mm_features[", d.feature, "]: vLLM rule ", d.rule, ": ", d.what,
                      d.reproduced ? "" : "; mrope places it at its own placeholder", "\n");
    }
    return out;
  }
  if (plan.sequential_grid != nullptr) return ExplainSequentialGrid(config, plan);
  if (plan.float_positions) return Explain<float>(config, plan);
  return Explain<int64_t>(config, plan);
}

}  // namespace mrope
