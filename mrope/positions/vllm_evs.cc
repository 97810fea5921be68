#include "mrope/positions/vllm_evs.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mrope/common/status_macros.h"
#include "mrope/positions/internal/vllm_evs_defects.h"
#include "mrope/positions/internal/vllm_frames.h"

namespace mrope {
namespace {

using Row = std::array<int64_t, 3>;
using vllm_internal::FeatureError;
using vllm_internal::Frame;

// A relative position as it comes back from the embedding dtype (rule E3): float32, then
// bfloat16 rounded to nearest even, read back with .long().
int64_t ThroughEmbedDType(int64_t value, EmbedDType dtype) {
  float f = static_cast<float>(value);
  if (dtype == EmbedDType::kBfloat16) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    bits = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u;
    std::memcpy(&f, &bits, sizeof(f));
  }
  return static_cast<int64_t>(f);
}


// One item's rows (positions relative to its base, before the dtype) and where text resumes
// relative to the base.
struct ItemRows {
  std::vector<Row> rows;
  int64_t text_after = 0;  // relative; dtype applied
};

// How the family's EVS path treats items.
struct EvsFamily {
  bool frames;  // Qwen3-VL: videos as frame sequences, text resumes at the maximum + 1
  MergeDivisor merge;
};

// Qwen2.5-VL's 4-channel rows (compute_mrope_for_media): kept (k tps trunc(spg), i, j), text
// after at w'.
ItemRows GridRows(const MultiModalFeature& f, const std::vector<int64_t>* keep, double tps,
                  const EvsFamily& family, EmbedDType dtype) {
  const int64_t h = family.merge.Quotient(f.grid.h), w = family.merge.Quotient(f.grid.w);
  // EVS truncates seconds per grid (second_per_grid_ts.long()) before scaling.
  const double interval = tps * static_cast<double>(static_cast<int64_t>(f.second_per_grid));
  ItemRows out;
  int64_t flat = 0;
  for (int64_t k = 0; k < f.grid.t; ++k) {
    const int64_t time = f.modality == Modality::kImage
                             ? 0
                             : static_cast<int64_t>(static_cast<double>(k) * interval);
    for (int64_t i = 0; i < h; ++i) {
      for (int64_t j = 0; j < w; ++j, ++flat) {
        if (keep == nullptr || (*keep)[flat] != 0) out.rows.push_back({time, i, j});
      }
    }
  }
  out.text_after = ThroughEmbedDType(w, dtype);
  return out;
}

// Qwen3-VL's rows: each frame's text, <vision_start>, kept tokens and <vision_end> at their
// positions in the unpruned frame sequence (an image is one frame without the text).
ItemRows FrameRows(const MultiModalFeature& f, const std::vector<Frame>& frames,
                   const std::vector<int64_t>* keep, const EvsFamily& family) {
  const int64_t h = family.merge.Quotient(f.grid.h), w = family.merge.Quotient(f.grid.w);
  ItemRows out;
  int64_t s = 0;
  const auto text = [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i, ++s) out.rows.push_back({s, s, s});
  };
  const int64_t count = f.modality == Modality::kImage ? 1 : f.grid.t;
  for (int64_t k = 0; k < count; ++k) {
    if (f.modality == Modality::kVideo) text(frames[k].start - frames[k].text_begin + 1);
    for (int64_t i = 0; i < h; ++i) {
      for (int64_t j = 0; j < w; ++j) {
        if (keep == nullptr || (*keep)[(k * h + i) * w + j] != 0) {
          out.rows.push_back({s, s + i, s + j});
        }
      }
    }
    s += std::max(h, w);
    if (f.modality == Modality::kVideo) text(1);
  }
  return out;
}

// vLLM's initial position (get_mrope_input_positions on the pruned prompt, rule E2) of the
// prompt's last token on the w axis, for a frames family: what a Qwen3-VL video at token 0
// takes its base from. Frames without video tokens are skipped; a frame holding more than h'w'
// is taken as whole grids then a partial one, each at the previous maximum + 1.
int64_t InitialLastPosition(const VllmRequest& request,
                            const std::vector<const MultiModalFeature*>& sorted,
                            const std::vector<std::vector<Frame>>& frames_of,
                            const EvsFamily& family) {
  int64_t st = 0, next = 0;
  int64_t last_begin = -1, last_s = 0, last_w = 1;  // the last grid piece
  const auto piece = [&](int64_t begin, int64_t tokens, int64_t w) {
    const int64_t s = next + (begin - st);
    const int64_t max_row = (tokens - 1) / w, max_col = tokens >= w ? w - 1 : tokens - 1;
    next = s + std::max(max_row, max_col) + 1;
    st = begin + tokens;
    last_begin = begin, last_s = s, last_w = w;
  };
  for (size_t n = 0; n < sorted.size(); ++n) {
    const MultiModalFeature& f = *sorted[n];
    const int64_t h = family.merge.Quotient(f.grid.h), w = family.merge.Quotient(f.grid.w);
    if (f.modality == Modality::kImage) {
      piece(f.offset, h * w, w);
      continue;
    }
    for (const Frame& frame : frames_of[n]) {
      int64_t at = frame.start + 1, left = frame.pads;
      for (; left > 0; at += std::min(left, h * w), left -= std::min(left, h * w)) {
        piece(at, std::min(left, h * w), w);
      }
    }
  }
  const int64_t last = static_cast<int64_t>(request.input_tokens.size()) - 1;
  if (last >= st || last_begin < 0) return next + (last - st);
  return last_s + (last - last_begin) % last_w;  // inside the last piece: its column
}

}  // namespace

absl::StatusOr<VllmEvsPositions> VllmEvsPositions::Create(const ModelConfig& config,
                                                          const VllmEvsRequest& request,
                                                          const PositionLimits& limits) {
  MROPE_RETURN_IF_ERROR(ValidateModelConfig(config));
  MROPE_RETURN_IF_ERROR(ValidatePositionLimits(limits));
  const PositionPolicy policy = PolicyFor(config);
  const bool grid_family = policy.seconds_list == SecondsList::kSecondPerGridTs;
  if (!policy.video_frames_as_blocks && !grid_family) {
    return absl::InvalidArgumentError(absl::StrCat(
        "EVS positions are vLLM's for Qwen2.5-VL and Qwen3-VL; ", config.rules->name,
        " has no EVS path"));
  }
  if (policy.vllm_frame_separator_tokens > 0) {  // openPangu-VL: vLLM has no EVS for it
    return absl::InvalidArgumentError(
        absl::StrCat(config.rules->name, "'s frames are separated by text: no EVS path"));
  }
  const VllmRequest& pruned = request.pruned;
  const int64_t n = static_cast<int64_t>(pruned.input_tokens.size());
  if (n < 1 || n > limits.max_tokens_per_row) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input_tokens: ", n, " tokens, must be in [1, max_tokens_per_row = ",
        limits.max_tokens_per_row, "]"));
  }
  MROPE_ASSIGN_OR_RETURN(const std::vector<const MultiModalFeature*> sorted,
                         SortedFeatures(config, pruned, limits));
  const EvsFamily family{policy.video_frames_as_blocks, MergeDivisor(config.spatial_merge_size)};
  const SpecialTokens& ids = config.tokens;
  const absl::Span<const int64_t> tokens = pruned.input_tokens;

  // Check every item's placeholder and mask; the frames of each Qwen3-VL video.
  std::vector<std::vector<Frame>> frames_of(sorted.size());
  std::vector<const std::vector<int64_t>*> mask_of(sorted.size(), nullptr);
  size_t videos = 0;
  for (size_t s = 0; s < sorted.size(); ++s) {
    const MultiModalFeature& f = *sorted[s];
    const size_t index = sorted[s] - pruned.features.data();
    const int64_t h = family.merge.Quotient(f.grid.h), w = family.merge.Quotient(f.grid.w);
    const int64_t per_frame = h * w;
    const int64_t end = f.offset + f.length;
    int64_t kept = per_frame;  // an image is not pruned
    if (f.modality == Modality::kVideo) {
      if (videos >= request.keep_masks.size()) {
        return FeatureError(index, f, "video ", videos, " has no keep mask (",
                            request.keep_masks.size(), " given)");
      }
      const std::vector<int64_t>& mask = request.keep_masks[videos];
      const int64_t expected = f.grid.t * per_frame;
      if (static_cast<int64_t>(mask.size()) != expected) {
        return FeatureError(index, f, "keep_masks[", videos, "] has ", mask.size(),
                            " values, the grid ", expected, " (t h' w')");
      }
      kept = 0;
      for (size_t i = 0; i < mask.size(); ++i) {
        if (mask[i] != 0 && mask[i] != 1) {
          return FeatureError(index, f, "keep_masks[", videos, "][", i, "] must be 0 or 1, got ",
                              mask[i]);
        }
        kept += mask[i];
      }
      const int64_t frame0 = std::count(mask.begin(), mask.begin() + per_frame, 1);
      if (frame0 != per_frame) {
        return FeatureError(index, f, "keep_masks[", videos, "] keeps ", frame0, " of frame 0's ",
                            per_frame, " tokens; EVS keeps frame 0 whole");
      }
      if (request.video_pruning_rate.has_value()) {
        const double q = *request.video_pruning_rate;
        if (!(q >= 0 && q < 1)) {
          return absl::InvalidArgumentError(
              absl::StrCat("video_pruning_rate must be in [0, 1), got ", q));
        }
        const int64_t want =
            std::max(per_frame, static_cast<int64_t>(static_cast<double>(expected) * (1 - q)));
        if (kept != want) {
          return FeatureError(index, f, "keep_masks[", videos, "] keeps ", kept, " tokens; rate ",
                              q, " keeps ", want);
        }
      }
      mask_of[s] = &mask;
      ++videos;
    }
    if (f.modality == Modality::kVideo && family.frames) {
      MROPE_ASSIGN_OR_RETURN(
          frames_of[s], vllm_internal::WalkFrames(ids, tokens, f.offset, end, f.grid.t, index));
      int64_t pads = 0;
      for (const Frame& frame : frames_of[s]) pads += frame.pads;
      if (pads != kept) {
        return FeatureError(index, f, "its frames hold ", pads,
                            " video tokens, its keep mask keeps ", kept);
      }
      continue;
    }
    const int64_t media = f.modality == Modality::kImage ? ids.image : ids.video;
    if (f.length != kept) {
      return FeatureError(
          index, f, "placeholder length ", f.length, ", but ", kept,
          f.modality == Modality::kVideo ? " tokens kept by its keep mask" : " image tokens");
    }
    MROPE_RETURN_IF_ERROR(
        vllm_internal::ExpectPlaceholderTokens(tokens, f.offset, end, media, index, f));
    if (f.offset == 0 || tokens[f.offset - 1] != ids.vision_start) {
      return FeatureError(index, f, "the token before its placeholder (", f.offset,
                          ") must be vision_start ", ids.vision_start);
    }
  }
  if (videos != request.keep_masks.size()) {
    return absl::InvalidArgumentError(absl::StrCat("keep_masks has ", request.keep_masks.size(),
                                                   " masks for ", videos, " videos"));
  }

  VllmEvsPositions out;
  out.t_.resize(n);
  out.h_.resize(n);
  out.w_.resize(n);
  int64_t next_text = 0, filled = 0, max_position = 0;
  std::vector<int64_t> bases(sorted.size());
  const auto text_until = [&](int64_t end) {
    if (filled < end) max_position = std::max(max_position, next_text + (end - filled) - 1);
    for (; filled < end; ++filled, ++next_text) {
      out.t_[filled] = out.h_[filled] = out.w_[filled] = next_text;
    }
  };
  for (size_t s = 0; s < sorted.size(); ++s) {
    const MultiModalFeature& f = *sorted[s];
    ItemRows item = family.frames ? FrameRows(f, frames_of[s], mask_of[s], family)
                                  : GridRows(f, mask_of[s], config.tokens_per_second, family,
                                             request.embed_dtype);
    text_until(f.offset);
    const int64_t base =
        f.offset > 0 ? out.w_[f.offset - 1] + 1
                     : InitialLastPosition(pruned, sorted, frames_of, family) + 1;
    bases[s] = base;
    int64_t item_max = 0;
    for (size_t r = 0; r < item.rows.size(); ++r) {
      std::array<int64_t*, 3> planes = {&out.t_[f.offset + r], &out.h_[f.offset + r],
                                        &out.w_[f.offset + r]};
      for (int a = 0; a < 3; ++a) {
        const int64_t relative = ThroughEmbedDType(item.rows[r][a], request.embed_dtype);
        item_max = std::max(item_max, relative);
        *planes[a] = base + relative;
      }
    }
    max_position = std::max(max_position, base + item_max);
    next_text = base + (family.frames ? item_max + 1 : item.text_after);
    filled = f.offset + f.length;
  }
  text_until(n);
  if (max_position > limits.max_position) {
    return absl::InvalidArgumentError(absl::StrCat("position ", max_position,
                                                   " exceeds max_position = ",
                                                   limits.max_position));
  }
  out.delta_ = max_position + 1 - n;

  out.defects_ = vllm_internal::FindVllmDefects(ids, tokens, pruned, sorted, frames_of,
                                                family.frames, family.merge, bases);
  return out;
}

template <typename Out>
absl::Status VllmEvsPositions::Fill(int64_t begin, int64_t end, PositionPlanes<Out> out) const {
  const int64_t n = num_tokens();
  if (begin < 0 || end < begin) {
    return absl::InvalidArgumentError(
        absl::StrCat("window [", begin, ", ", end, ") must have 0 <= begin <= end"));
  }
  for (int64_t i = begin; i < end; ++i) {
    const std::array<int64_t, 3> value =
        i < n ? std::array<int64_t, 3>{t_[i], h_[i], w_[i]}
              : std::array<int64_t, 3>{i + delta_, i + delta_, i + delta_};
    for (int a = 0; a < 3; ++a) {
      if (std::is_same<Out, int32_t>::value && value[a] > std::numeric_limits<int32_t>::max()) {
        return absl::InvalidArgumentError(absl::StrCat("position ", value[a], " of token ", i,
                                                       " does not fit int32"));
      }
    }
    out.t[i - begin] = static_cast<Out>(value[0]);
    out.h[i - begin] = static_cast<Out>(value[1]);
    out.w[i - begin] = static_cast<Out>(value[2]);
  }
  return absl::OkStatus();
}

template absl::Status VllmEvsPositions::Fill<int64_t>(int64_t, int64_t,
                                                      PositionPlanes<int64_t>) const;
template absl::Status VllmEvsPositions::Fill<int32_t>(int64_t, int64_t,
                                                      PositionPlanes<int32_t>) const;
template absl::Status VllmEvsPositions::Fill<float>(int64_t, int64_t, PositionPlanes<float>) const;

}  // namespace mrope
