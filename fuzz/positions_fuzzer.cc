// Fuzz target: the token scanner and the position builder, every model family.
//
// The input is decoded (fuzz/fuzz_input.h) into a model preset with optional overrides, optional
// tight limits, and either a padded batch (token rows + media lists, through PlanBatch) or a
// list of spans (straight into SequencePositions::Create). Whatever is accepted is then filled
// and checked against properties the builder promises:
//   * filling a planned sequence succeeds for its own output type (int64, or float for
//     Qwen3-Omni) and refuses the other with an error;
//   * the largest value written equals max_position(); nothing is negative or non-finite;
//   * decode step k takes max_position() + 1 + k on every axis;
//   * any window [begin, end), prompt or decode, equals the same slice of the full fill, and so
//     do PackSequences and int32/float outputs (int32 only refused when a value exceeds it);
//   * a batch's padding slots hold the family's pad value and its decode positions agree.
//
// Input format (fuzz/make_seeds.py writes it; reads past the end give zeros):
//   preset byte (% the number of presets, in PresetNames() order), flags byte (kFlag*),
//   [merge byte]             if kFlagMerge: spatial_merge_size = 1 + byte % 4
//   [3 x Seconds]            if kFlagScales: tokens_per_second, position_id_per_seconds,
//                            seconds_per_chunk
//   [7 x limit byte]         if kFlagLimits: each PositionLimits field from kLimitChoices
//   kFlagSpans set:   span count byte (% 9), then per span: kind byte (% 5; bit 7 = open),
//                     text Wide, grid t/h/w Wide, Seconds, audio_tokens Wide
//   kFlagSpans clear: images (count byte % 16, then t/h/w Wide each), videos (same), seconds
//                     (count byte % 17, Seconds each), audio lengths (count byte % 16, Wide each),
//                     rows (1 + byte % 4, then per row an op count Length and the ops, see
//                     RowBuilder::Op)
//   then the window choices the checks read.
// Wide: FuzzInput::Wide().
// Seconds: a byte indexing kSeconds, or past its end a raw float32.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_input.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/limits.h"
#include "mrope/positions/model_config.h"
#include "mrope/model/model_family.h"
#include "mrope/positions/scanner.h"
#include "mrope/positions/sequence_positions.h"
#include "mrope/positions/span.h"

namespace mrope {
namespace fuzz {
namespace {

constexpr uint8_t kFlagMerge = 1 << 0;
constexpr uint8_t kFlagScales = 1 << 1;
constexpr uint8_t kFlagLimits = 1 << 2;
constexpr uint8_t kFlagSpans = 1 << 3;
constexpr uint8_t kFlagRightPad = 1 << 4;
constexpr uint8_t kFlagNoMask = 1 << 5;
constexpr uint8_t kFlagAudioInVideo = 1 << 6;

constexpr float kSeconds[] = {0.2f, 0.25f, 1.0f / 3, 0.4f, 0.5f, 0.7f, 0.9f, 1.0f, 4.0f / 3,
                              1.4f, 1.5f,  1.8f,     2.0f, 2.5f, 0.0f, 13.0f, 25.0f, 1e-3f};
constexpr int64_t kLimitChoices[] = {0, 1, 2, 3, 7, 16, 100, 1000, 1 << 16};

constexpr int64_t kPadId = 151643;
constexpr int64_t kTextId = 1000;
// Work caps that keep one execution fast; the library's own limits are far larger.
constexpr int64_t kMaxBuiltTokens = int64_t{1} << 13;
constexpr int64_t kMaxFullFill = int64_t{1} << 13;
constexpr int64_t kDecodeChecked = 4;

int64_t DecodeSteps(const PositionLimits& limits) {
  return std::max<int64_t>(0, std::min(kDecodeChecked, limits.max_decode_steps));
}

float Seconds(FuzzInput& in) {
  const uint8_t b = in.Byte();
  constexpr size_t kCount = sizeof(kSeconds) / sizeof(kSeconds[0]);
  return b < kCount ? kSeconds[b] : in.Float32();
}

Grid ReadGrid(FuzzInput& in) {
  Grid g;
  g.t = in.Wide();
  g.h = in.Wide();
  g.w = in.Wide();
  return g;
}

int64_t Pick(FuzzInput& in, int64_t lo, int64_t hi) {  // in [lo, hi], hi >= lo
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int64_t>(span == 0 ? in.U64() : in.U64() % span);
}

// ---- Checks on a planned sequence. ------------------------------------------------------------

template <typename Out>
std::vector<Out> MustFill(const SequencePositions& seq, int64_t begin, int64_t end) {
  std::vector<Out> out(3 * (end - begin));
  const int64_t len = end - begin;
  const auto status = seq.Fill<Out>(begin, end, {out.data(), out.data() + len,
                                                 out.data() + 2 * len});
  FUZZ_CHECK(status.ok(), absl::StrCat("Fill(", begin, ", ", end, ") failed: ",
                                       status.ToString()));
  return out;
}

// The decode value k steps after the prompt, as HF defines it: max + 1 + k on every axis.
// An empty sequence decodes from 0.
bool DecodeMatches(const SequencePositions& seq, int64_t k, double v) {
  const double first = seq.num_tokens() == 0 ? 0 : seq.max_position() + 1;
  const double expected = first + static_cast<double>(k);
  if (!seq.float_positions()) return v == expected;
  // Qwen3-Omni adds in float32: allow the roundings of delta and of the sum.
  const double scale = std::fabs(seq.max_position()) + seq.num_tokens() + k + 1;
  return std::fabs(v - expected) <= scale * std::ldexp(1.0, -22);
}

template <typename Out>
void CheckSequenceAs(const SequencePositions& seq, const PositionLimits& limits, FuzzInput& in) {
  const int64_t n = seq.num_tokens();
  // Reference range [r0, r1): the whole prompt plus a few decode steps when small enough.
  int64_t r0 = 0;
  int64_t r1 = n + DecodeSteps(limits);
  if (n > kMaxFullFill) {
    r0 = Pick(in, 0, n - 1);
    r1 = std::min(r0 + kMaxFullFill, n + DecodeSteps(limits));
  }
  const int64_t len = r1 - r0;
  if (len == 0) return;
  const bool whole_prompt = r0 == 0 && r1 >= n;
  const std::vector<Out> ref = MustFill<Out>(seq, r0, r1);
  double prompt_max = -1;
  for (int64_t i = r0; i < r1; ++i) {
    for (int axis = 0; axis < 3; ++axis) {
      const double v = static_cast<double>(ref[axis * len + (i - r0)]);
      FUZZ_CHECK(std::isfinite(v) && v >= 0, absl::StrCat("position ", v, " at token ", i));
      if (i < n) {
        prompt_max = std::max(prompt_max, v);
        FUZZ_CHECK(v <= seq.max_position(),
                   absl::StrCat("position ", v, " at token ", i, " above max_position ",
                                seq.max_position()));
      } else {
        FUZZ_CHECK(DecodeMatches(seq, i - n, v),
                   absl::StrCat("decode step ", i - n, " is ", v, ", max_position ",
                                seq.max_position()));
      }
    }
  }
  if (whole_prompt && n > 0) {
    FUZZ_CHECK(prompt_max == seq.max_position(),
               absl::StrCat("largest written position ", prompt_max, " != max_position ",
                            seq.max_position()));
  }
  // A window anywhere in the reference range equals the same slice.
  const int64_t w0 = Pick(in, r0, r1);
  const int64_t w1 = Pick(in, w0, r1);
  const std::vector<Out> window = MustFill<Out>(seq, w0, w1);
  for (int axis = 0; axis < 3; ++axis) {
    for (int64_t i = w0; i < w1; ++i) {
      FUZZ_CHECK(window[axis * (w1 - w0) + (i - w0)] == ref[axis * len + (i - r0)],
                 absl::StrCat("window [", w0, ", ", w1, ") differs at token ", i, " axis ",
                              axis));
    }
  }
  // The other output types: the same values, or a clean refusal.
  if (std::is_integral<Out>::value) {
    std::vector<float> as_float = MustFill<float>(seq, r0, r1);
    for (int64_t j = 0; j < 3 * len; ++j) {
      FUZZ_CHECK(as_float[j] == static_cast<float>(ref[j]), "float output differs");
    }
    std::vector<int32_t> as_int32(3 * len);
    const auto status = seq.Fill<int32_t>(
        r0, r1, {as_int32.data(), as_int32.data() + len, as_int32.data() + 2 * len});
    const double window_max = static_cast<double>(*std::max_element(ref.begin(), ref.end()));
    const bool fits = window_max <= std::numeric_limits<int32_t>::max();
    FUZZ_CHECK(status.ok() == fits, absl::StrCat("int32 output of max ", window_max, ": ",
                                                  status.ToString()));
    for (int64_t j = 0; fits && j < 3 * len; ++j) {
      FUZZ_CHECK(as_int32[j] == static_cast<double>(ref[j]), "int32 output differs");
    }
  } else {
    std::vector<int64_t> as_int(3);
    const auto status = seq.Fill<int64_t>(0, 1, {as_int.data(), as_int.data() + 1,
                                                 as_int.data() + 2});
    FUZZ_CHECK(!seq.float_positions() || !status.ok(), "float positions written as int64");
  }
  // Packing two copies puts the same values back to back.
  if (whole_prompt && n > 0) {
    const SequencePositions pair[] = {seq, seq};
    auto packed = PackSequences<Out>(pair, limits);
    if (!packed.ok()) {
      FUZZ_CHECK(2 * n > limits.max_total_tokens, packed.status().ToString());
      return;
    }
    FUZZ_CHECK(packed->total_tokens == 2 * n && packed->cu_seqlens.size() == 3,
               "packed shape");
    for (int axis = 0; axis < 3; ++axis) {
      for (int64_t i = 0; i < 2 * n; ++i) {
        FUZZ_CHECK(packed->positions[axis * 2 * n + i] == ref[axis * len + i % n],
                   absl::StrCat("packed position differs at ", i));
      }
    }
  }
}

void CheckSequence(const SequencePositions& seq, const PositionLimits& limits, FuzzInput& in) {
  if (seq.float_positions()) {
    CheckSequenceAs<float>(seq, limits, in);
  } else {
    CheckSequenceAs<int64_t>(seq, limits, in);
  }
}

// ---- Spans mode. ------------------------------------------------------------------------------

void RunSpans(const ModelConfig& config, const PositionLimits& limits, FuzzInput& in) {
  std::vector<Span> spans(in.Byte() % 9);
  for (Span& span : spans) {
    const uint8_t kind = in.Byte();
    span.kind = static_cast<SpanKind>(kind % 5);
    span.closed = (kind & 0x80) == 0;
    span.text_tokens = in.Wide();
    span.grid = ReadGrid(in);
    span.seconds_per_grid = Seconds(in);
    span.audio_tokens = in.Wide();
  }
  auto seq = SequencePositions::Create(config, spans, limits);
  if (!seq.ok()) return;
  CheckSequence(*seq, limits, in);
}

// ---- Batch mode. ------------------------------------------------------------------------------

// Builds token rows from ops; the well-formed block ops follow the media lists with their own
// cursor so that deep paths are reachable.
class RowBuilder {
 public:
  RowBuilder(const ModelConfig& config, const MediaInputs& media)
      : config_(config), policy_(PolicyFor(config)), media_(media) {}

  // Reads one row's ops; returns its tokens and mask.
  void Row(FuzzInput& in, std::vector<int64_t>& ids, std::vector<int64_t>& mask) {
    const int64_t ops = in.Length();
    for (int64_t i = 0; i < ops && !in.empty(); ++i) Op(in, ids, mask);
  }

 private:
  // op = kind (low 4 bits) | arg (high 4 bits).
  void Op(FuzzInput& in, std::vector<int64_t>& ids, std::vector<int64_t>& mask) {
    const uint8_t op = in.Byte();
    const int arg = op >> 4;
    const SpecialTokens& t = config_.tokens;
    switch (op & 15) {
      case 0: return Emit(ids, mask, kTextId + arg, 1 + arg);
      case 1: return Emit(ids, mask, kTextId, in.Length());
      case 2: return Emit(ids, mask, t.vision_start, 1);
      case 3: return Emit(ids, mask, t.vision_end, 1);
      case 4: return Emit(ids, mask, t.image, in.Length());
      case 5: return Emit(ids, mask, t.video, in.Length());
      case 6: return Emit(ids, mask, t.audio_start, 1);
      case 7: return Emit(ids, mask, t.audio_end, 1);
      case 8: return Emit(ids, mask, t.audio, in.Length());
      case 9: return Emit(ids, mask, in.I64(), 1);
      case 10: return Emit(ids, mask, kPadId, 1 + arg, /*real=*/false);
      case 11: return ImageBlock(ids, mask, (arg & 1) != 0);
      case 12: return VideoBlock(ids, mask, (arg & 1) != 0);
      case 13: return AudioBlock(ids, mask);
      case 14: return AudioInVideoBlock(ids, mask, (arg & 1) != 0);
      default:  // GLM's video brackets (nothing for families without them)
        return Emit(ids, mask, (arg & 1) != 0 ? t.video_end : t.video_start,
                    t.video_start >= 0 ? 1 : 0);
    }
  }

  void Emit(std::vector<int64_t>& ids, std::vector<int64_t>& mask, int64_t id, int64_t count,
            bool real = true) {
    count = std::max<int64_t>(0, std::min(count, kMaxBuiltTokens - built_));
    built_ += count;
    ids.insert(ids.end(), count, id);
    mask.insert(mask.end(), count, real ? 1 : 0);
  }

  // Tokens of a grid under the config's merge size, or 1 for a grid the library must refuse.
  int64_t GridTokens(const Grid& g) const {
    const int64_t m = config_.spatial_merge_size;
    const auto ok = [](int64_t v) { return v >= 1 && v <= 4096; };
    if (!ok(g.t) || !ok(g.h) || !ok(g.w)) return 1;
    return g.t * (g.h / m) * (g.w / m);
  }

  void ImageBlock(std::vector<int64_t>& ids, std::vector<int64_t>& mask, bool open) {
    const SpecialTokens& t = config_.tokens;
    const Grid g = image_ < media_.image_grid_thw.size() ? media_.image_grid_thw[image_++]
                                                         : Grid{1, 2, 2};
    Emit(ids, mask, t.vision_start, 1);
    Emit(ids, mask, t.image, GridTokens(g));
    if (!open) Emit(ids, mask, t.vision_end, 1);
  }

  void VideoBlock(std::vector<int64_t>& ids, std::vector<int64_t>& mask, bool open) {
    const SpecialTokens& t = config_.tokens;
    Grid g = video_ < media_.video_grid_thw.size() ? media_.video_grid_thw[video_] : Grid{1, 2, 2};
    if (policy_.video_marking == VideoMarking::kImageTokensInVideoBrackets) {
      return BracketedVideo(ids, mask, g, open);
    }
    if (policy_.video_frames_as_blocks && g.t > 1) {
      if (++frame_ >= g.t) {
        frame_ = 0;
        ++video_;
      }
      g.t = 1;
    } else {
      ++video_;
    }
    Emit(ids, mask, t.vision_start, 1);
    Emit(ids, mask, t.video, GridTokens(g));
    if (!open) Emit(ids, mask, t.vision_end, 1);
  }

  // GLM: <video_start>, per frame <vision_start> image tokens <vision_end> and a timestamp,
  // <video_end>; open ends on the last frame's last token.
  void BracketedVideo(std::vector<int64_t>& ids, std::vector<int64_t>& mask, Grid g, bool open) {
    const SpecialTokens& t = config_.tokens;
    ++video_;
    const int64_t frames = std::clamp<int64_t>(g.t, 1, 64);
    g.t = 1;
    Emit(ids, mask, t.video_start, 1);
    for (int64_t k = 0; k < frames; ++k) {
      Emit(ids, mask, t.vision_start, 1);
      Emit(ids, mask, t.image, GridTokens(g));
      if (open && k + 1 == frames) return;
      Emit(ids, mask, t.vision_end, 1);
      Emit(ids, mask, kTextId, 1);
    }
    Emit(ids, mask, t.video_end, 1);
  }

  int64_t NextAudioTokens() {
    const int64_t frames =
        audio_ < media_.audio_feature_lengths.size() ? media_.audio_feature_lengths[audio_++] : 1;
    if (frames < 1 || frames > (int64_t{1} << 30)) return 1;
    return AudioTokenCount(policy_.audio_length, frames);
  }

  void AudioBlock(std::vector<int64_t>& ids, std::vector<int64_t>& mask) {
    const SpecialTokens& t = config_.tokens;
    Emit(ids, mask, t.audio_start, 1);
    Emit(ids, mask, t.audio, NextAudioTokens());
    Emit(ids, mask, t.audio_end, 1);
  }

  // <vision_start><audio_start> video and audio tokens (either order) <audio_end><vision_end>.
  void AudioInVideoBlock(std::vector<int64_t>& ids, std::vector<int64_t>& mask,
                         bool audio_first) {
    const SpecialTokens& t = config_.tokens;
    const Grid g = video_ < media_.video_grid_thw.size() ? media_.video_grid_thw[video_++]
                                                         : Grid{1, 2, 2};
    const int64_t audio = NextAudioTokens();
    Emit(ids, mask, t.vision_start, 1);
    Emit(ids, mask, t.audio_start, 1);
    if (audio_first) Emit(ids, mask, t.audio, audio);
    Emit(ids, mask, t.video, GridTokens(g));
    if (!audio_first) Emit(ids, mask, t.audio, audio);
    Emit(ids, mask, t.audio_end, 1);
    Emit(ids, mask, t.vision_end, 1);
  }

  const ModelConfig& config_;
  const PositionPolicy policy_;
  const MediaInputs& media_;
  size_t image_ = 0;
  size_t video_ = 0;
  int64_t frame_ = 0;
  size_t audio_ = 0;
  int64_t built_ = 0;
};

// Checks a planned batch against its rows: real columns hold the row's positions, padding the
// pad value, decode k the row maximum + 1 + k.
template <typename Out>
void CheckBatchAs(const PromptBatch& batch, const BatchPlan& plan, const PositionLimits& limits,
                  FuzzInput& in) {
  const int64_t b = plan.batch_size;
  const int64_t l = plan.seq_len;
  std::vector<Out> out;
  const auto status = FillBatch(plan, out);
  FUZZ_CHECK(status.ok(), absl::StrCat("FillBatch failed: ", status.ToString()));
  FUZZ_CHECK(static_cast<int64_t>(out.size()) == 3 * b * l, "FillBatch size");
  // FillDecode refuses B * steps over max_total_tokens (the tight limits can make it 0).
  const int64_t steps = std::min(DecodeSteps(limits), limits.max_total_tokens / b);
  std::vector<Out> decode;
  const auto decode_status = FillDecode(plan, steps, decode);
  FUZZ_CHECK(decode_status.ok(), absl::StrCat("FillDecode failed: ", decode_status.ToString()));
  for (int64_t row = 0; row < b; ++row) {
    const SequencePositions& seq = plan.rows[row];
    const int64_t n = seq.num_tokens();
    std::vector<bool> real(l, true);
    int64_t real_count = l;
    if (!batch.attention_mask.empty()) {
      for (int64_t c = 0; c < l; ++c) real[c] = batch.attention_mask[row * l + c] == 1;
      real_count = std::count(real.begin(), real.end(), true);
    }
    FUZZ_CHECK(n == real_count, absl::StrCat("row ", row, " plans ", n, " tokens for ",
                                             real_count, " real columns"));
    const std::vector<Out> own = MustFill<Out>(seq, 0, n);
    double row_max = -1;  // what HF takes the delta from
    for (int axis = 0; axis < 3; ++axis) {
      for (int64_t c = 0, i = 0; c < l; ++c) {
        const Out v = out[(axis * b + row) * l + c];
        if (real[c]) {
          FUZZ_CHECK(v == own[axis * n + i], absl::StrCat("row ", row, " column ", c));
          ++i;
        } else {
          FUZZ_CHECK(v == static_cast<Out>(plan.pad_value),
                     absl::StrCat("padding slot ", row, ", ", c, " holds ", v));
        }
        if (real[c] || plan.text_only_path) row_max = std::max(row_max, static_cast<double>(v));
      }
    }
    for (int64_t k = 0; k < steps; ++k) {
      for (int axis = 0; axis < 3; ++axis) {
        const double v = static_cast<double>(decode[(axis * b + row) * steps + k]);
        const double expected = row_max + 1 + k;
        const bool same = plan.float_positions
                              ? std::fabs(v - expected) <= (row_max + l + k + 1) * 0x1p-22
                              : v == expected;
        FUZZ_CHECK(same, absl::StrCat("row ", row, " decode step ", k, " is ", v,
                                      ", expected ", expected));
      }
    }
  }
  CheckSequence(plan.rows[Pick(in, 0, b - 1)], limits, in);
}

void RunBatch(const ModelConfig& config, const PositionLimits& limits, uint8_t flags,
              FuzzInput& in) {
  PromptBatch batch;
  MediaInputs& media = batch.media;
  media.use_audio_in_video = (flags & kFlagAudioInVideo) != 0;
  media.image_grid_thw.resize(in.Byte() % 16);
  for (Grid& g : media.image_grid_thw) g = ReadGrid(in);
  media.video_grid_thw.resize(in.Byte() % 16);
  for (Grid& g : media.video_grid_thw) g = ReadGrid(in);
  std::vector<double> seconds(in.Byte() % 17);
  for (double& s : seconds) s = Seconds(in);
  (PolicyFor(config).seconds_list == SecondsList::kSecondPerGridTs
       ? media.second_per_grid_ts
       : media.video_second_per_grid) = seconds;
  media.audio_feature_lengths.resize(in.Byte() % 16);
  for (int64_t& a : media.audio_feature_lengths) a = in.Wide();

  RowBuilder builder(config, media);
  std::vector<std::vector<int64_t>> ids(1 + in.Byte() % 4);
  std::vector<std::vector<int64_t>> masks(ids.size());
  size_t seq_len = 0;
  for (size_t r = 0; r < ids.size(); ++r) {
    builder.Row(in, ids[r], masks[r]);
    seq_len = std::max(seq_len, ids[r].size());
  }
  const bool no_mask = (flags & kFlagNoMask) != 0;
  batch.batch_size = ids.size();
  batch.seq_len = seq_len;
  std::vector<int64_t> flat_ids;  // what the batch views
  std::vector<int64_t> flat_mask;
  for (size_t r = 0; r < ids.size(); ++r) {
    // Equalize lengths: padding (mask 0), or text tokens when there is no mask.
    const size_t pad = seq_len - ids[r].size();
    const int64_t fill_id = no_mask ? kTextId : kPadId;
    const auto at = (flags & kFlagRightPad) ? ids[r].end() : ids[r].begin();
    const auto mask_at = (flags & kFlagRightPad) ? masks[r].end() : masks[r].begin();
    ids[r].insert(at, pad, fill_id);
    masks[r].insert(mask_at, pad, no_mask ? 1 : 0);
    flat_ids.insert(flat_ids.end(), ids[r].begin(), ids[r].end());
    if (!no_mask) flat_mask.insert(flat_mask.end(), masks[r].begin(), masks[r].end());
  }
  batch.input_ids = flat_ids;
  batch.attention_mask = flat_mask;
  auto plan = PlanBatch(config, batch, limits);
  if (!plan.ok()) return;
  FUZZ_CHECK(static_cast<int64_t>(plan->rows.size()) == plan->batch_size, "plan rows");
  if (plan->float_positions) {
    CheckBatchAs<float>(batch, *plan, limits, in);
    std::vector<int64_t> as_int;
    FUZZ_CHECK(!FillDecode(*plan, 1, as_int).ok(), "float decode written as int64");
  } else {
    CheckBatchAs<int64_t>(batch, *plan, limits, in);
  }
}

}  // namespace
}  // namespace fuzz
}  // namespace mrope

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ::mrope;
  using namespace ::mrope::fuzz;
  FuzzInput in(data, size);
  static const auto* const presets = new std::vector<std::string>(PresetNames());
  auto config = PresetConfig((*presets)[in.Byte() % presets->size()]);
  FUZZ_CHECK(config.ok(), config.status().ToString());
  const uint8_t flags = in.Byte();
  if (flags & kFlagMerge) config->spatial_merge_size = 1 + in.Byte() % 4;
  if (flags & kFlagScales) {
    config->tokens_per_second = Seconds(in);
    config->position_id_per_seconds = Seconds(in);
    config->seconds_per_chunk = Seconds(in);
  }
  PositionLimits limits;
  if (flags & kFlagLimits) {
    constexpr size_t kChoices = sizeof(kLimitChoices) / sizeof(kLimitChoices[0]);
    for (int64_t* limit : {&limits.max_tokens_per_row, &limits.max_batch_rows,
                           &limits.max_total_tokens, &limits.max_grid_value,
                           &limits.max_grid_tokens, &limits.max_position,
                           &limits.max_decode_steps}) {
      const uint8_t b = in.Byte();
      if (b < kChoices) *limit = kLimitChoices[b];
    }
  }
  if (flags & kFlagSpans) {
    RunSpans(*config, limits, in);
  } else {
    RunBatch(*config, limits, flags, in);
  }
  return 0;
}
