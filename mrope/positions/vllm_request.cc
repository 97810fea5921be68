#include "mrope/positions/vllm_request.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mrope/common/status_macros.h"
#include "mrope/positions/internal/vllm_frames.h"

namespace mrope {
using vllm_internal::FeatureError;

namespace vllm_internal {

const char* ModalityName(Modality modality) {
  return modality == Modality::kImage ? "image" : "video";
}

absl::Status ExpectPlaceholderTokens(absl::Span<const int64_t> tokens, int64_t begin,
                                     int64_t end, int64_t id, size_t feature,
                                     const MultiModalFeature& f) {
  for (int64_t i = begin; i < end; ++i) {
    if (tokens[i] != id) {
      return FeatureError(feature, f, "token ", i, " of its placeholder is ", tokens[i],
                          ", expected the ", ModalityName(f.modality), " token ", id);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Frame>> WalkFrames(const SpecialTokens& ids,
                                              absl::Span<const int64_t> tokens, int64_t begin,
                                              int64_t end, int64_t frames, size_t feature) {
  const auto error = [&](int64_t frame, int64_t index, auto... what) {
    return absl::InvalidArgumentError(absl::StrCat("mm_features[", feature, "] (video): frame ",
                                                   frame, ", token ", index, ": ", what...));
  };
  std::vector<Frame> out;
  int64_t i = begin;
  for (int64_t frame = 0; frame < frames; ++frame) {
    Frame f;
    f.text_begin = i;
    while (i < end && tokens[i] != ids.vision_start) {
      if (tokens[i] == ids.vision_end || tokens[i] == ids.video || tokens[i] == ids.image) {
        return error(frame, i, "found ", tokens[i], " in the frame's text, before its "
                     "vision_start ", ids.vision_start);
      }
      ++i;
    }
    if (i == end) {
      return error(frame, i, "the placeholder ends before the frame's vision_start (",
                   frames, " frames expected)");
    }
    f.start = i++;
    while (i < end && tokens[i] == ids.video) ++i;
    f.pads = i - f.start - 1;
    if (i == end || tokens[i] != ids.vision_end) {
      return error(frame, i, "expected vision_end ", ids.vision_end, " after the frame's ",
                   f.pads, " video tokens, found ",
                   i == end ? std::string("the placeholder's end") : absl::StrCat(tokens[i]));
    }
    ++i;
    out.push_back(f);
  }
  if (i != end) {
    return error(frames - 1, i, "the placeholder goes on past the last frame's vision_end (",
                 end - i, " tokens)");
  }
  return out;
}

}  // namespace vllm_internal

namespace {

// openPangu-VL's video placeholder (PositionPolicy::vllm_frame_separator_tokens): t frames of
// video tokens, `separator` text tokens between each two, checked.
absl::Status CheckSeparatedFrames(const ModelConfig& config, absl::Span<const int64_t> tokens,
                                  const MultiModalFeature& f, size_t index, int64_t frame_tokens,
                                  int64_t separator) {
  const int64_t expected = f.grid.t * frame_tokens + (f.grid.t - 1) * separator;
  if (f.length != expected) {
    return FeatureError(index, f, "placeholder length ", f.length, " differs from its ",
                        f.grid.t, " frames of ", frame_tokens, " video tokens with ", separator,
                        " tokens between each two (", expected, ")");
  }
  for (int64_t k = 0, at = f.offset; k < f.grid.t; ++k, at += frame_tokens + separator) {
    MROPE_RETURN_IF_ERROR(vllm_internal::ExpectPlaceholderTokens(
        tokens, at, at + frame_tokens, config.tokens.video, index, f));
    for (int64_t i = at + frame_tokens; k + 1 < f.grid.t && i < at + frame_tokens + separator;
         ++i) {
      if (tokens[i] == config.tokens.video || tokens[i] == config.tokens.image) {
        return FeatureError(index, f, "token ", i, " between frames ", k, " and ", k + 1,
                            " is the media token ", tokens[i], ", expected ", separator,
                            " text tokens there");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<const MultiModalFeature*>> SortedFeatures(
    const ModelConfig& config, const VllmRequest& request, const PositionLimits& limits) {
  const int64_t n = static_cast<int64_t>(request.input_tokens.size());
  std::vector<const MultiModalFeature*> sorted;
  sorted.reserve(request.features.size());
  for (const MultiModalFeature& f : request.features) sorted.push_back(&f);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const MultiModalFeature* a, const MultiModalFeature* b) {
                     return a->offset < b->offset;
                   });
  const MergeDivisor merge(config.spatial_merge_size);
  int64_t previous_end = 0;
  for (const MultiModalFeature* f : sorted) {
    const size_t index = f - request.features.data();
    if (f->offset < 0 || f->length < 1 || f->offset > n || f->length > n - f->offset) {
      return FeatureError(index, *f, "placeholder [", f->offset, ", +", f->length,
                          ") must have length >= 1 and lie in the prompt's ", n, " tokens");
    }
    if (f->offset < previous_end) {
      return FeatureError(index, *f, "placeholder at ", f->offset,
                          " overlaps the previous item's, which ends at ", previous_end);
    }
    previous_end = f->offset + f->length;
    const Grid& g = f->grid;
    if (std::min({g.t, g.h, g.w}) < 1 || std::max({g.t, g.h, g.w}) > limits.max_grid_value) {
      return FeatureError(index, *f, "grid [", g.t, ", ", g.h, ", ", g.w, "] must be in [1, ",
                          "max_grid_value = ", limits.max_grid_value, "]");
    }
    if (!merge.Divides(g.h) || !merge.Divides(g.w)) {
      return FeatureError(index, *f, "grid [", g.t, ", ", g.h, ", ", g.w,
                          "]: h and w must be divisible by spatial_merge_size ",
                          config.spatial_merge_size);
    }
    if (f->modality == Modality::kImage && g.t != 1) {
      return FeatureError(index, *f, "image grid t must be 1 (vLLM asserts it), got ", g.t);
    }
    if (!std::isfinite(f->second_per_grid) || f->second_per_grid < 0) {
      return FeatureError(index, *f, "second_per_grid_ts must be finite and >= 0, got ",
                          f->second_per_grid);
    }
  }
  return sorted;
}

absl::StatusOr<std::vector<Span>> VllmRequestSpans(const ModelConfig& config,
                                                   const VllmRequest& request,
                                                   const PositionLimits& limits) {
  MROPE_ASSIGN_OR_RETURN(const std::vector<const MultiModalFeature*> sorted,
                         SortedFeatures(config, request, limits));
  const PositionPolicy policy = PolicyFor(config);
  const MergeDivisor merge(config.spatial_merge_size);
  const absl::Span<const int64_t> tokens = request.input_tokens;
  std::vector<Span> spans;
  int64_t text_from = 0;  // first token not yet in a span
  const auto add_text = [&](int64_t until) {
    if (until > text_from) spans.push_back(Span::Text(until - text_from));
    text_from = until;
  };
  const auto add_media = [&](Span span) {
    span.bracketed = false;  // the markers around it are text
    spans.push_back(span);
  };
  for (const MultiModalFeature* f : sorted) {
    const size_t index = f - request.features.data();
    const int64_t frame_tokens = merge.Quotient(f->grid.h) * merge.Quotient(f->grid.w);
    const int64_t end = f->offset + f->length;
    if (f->modality == Modality::kVideo && policy.images_only) {
      return FeatureError(index, *f, "vLLM's ", config.rules->name,
                          " code takes images only (a video raises there)");
    }
    if (f->modality == Modality::kVideo && policy.vllm_frame_separator_tokens > 0) {
      const int64_t separator = policy.vllm_frame_separator_tokens;
      MROPE_RETURN_IF_ERROR(
          CheckSeparatedFrames(config, tokens, *f, index, frame_tokens, separator));
      for (int64_t k = 0; k < f->grid.t; ++k) {
        add_text(f->offset + k * (frame_tokens + separator));  // the separators before it
        add_media(Span::Video({1, f->grid.h, f->grid.w}, 1.0));
        text_from += frame_tokens;
      }
      continue;
    }
    if (f->modality == Modality::kVideo && policy.video_frames_as_blocks) {
      MROPE_ASSIGN_OR_RETURN(const std::vector<vllm_internal::Frame> frames,
                             vllm_internal::WalkFrames(config.tokens, tokens, f->offset, end,
                                                       f->grid.t, index));
      for (size_t k = 0; k < frames.size(); ++k) {
        if (frames[k].pads != frame_tokens) {
          return FeatureError(index, *f, "frame ", k, " at token ", frames[k].start + 1,
                              " has ", frames[k].pads, " video tokens, its grid ", frame_tokens,
                              " (an EVS-pruned video is a vllm_evs request)");
        }
        add_text(frames[k].start + 1);
        add_media(Span::Video({1, f->grid.h, f->grid.w}, 1.0));
        text_from += frame_tokens;
      }
      continue;
    }
    const bool image = f->modality == Modality::kImage;
    const int64_t grid_tokens = f->grid.t * frame_tokens;
    if (f->length != grid_tokens) {
      return FeatureError(index, *f, "placeholder length ", f->length, " differs from its grid's ",
                          grid_tokens, " tokens (an EVS-pruned video is a vllm_evs request)");
    }
    MROPE_RETURN_IF_ERROR(vllm_internal::ExpectPlaceholderTokens(
        tokens, f->offset, end, image ? config.tokens.image : config.tokens.video, index, *f));
    add_text(f->offset);
    add_media(image ? Span::Image(f->grid) : Span::Video(f->grid, f->second_per_grid));
    text_from = end;
  }
  add_text(static_cast<int64_t>(tokens.size()));
  return spans;
}

}  // namespace mrope
