#include "mrope/positions/internal/vllm_evs_defects.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"

namespace mrope {
namespace vllm_internal {
namespace {

// Where vLLM's recompute_mrope_positions writes an item (E4), given c, the rows written before.
struct VllmPlacement {
  bool found = false;
  int64_t at = 0;
};

// `media_before[i]`: the image and video tokens before token i.
VllmPlacement VllmWriteIndex(const std::vector<int64_t>& starts,
                             const std::vector<int64_t>& media_before, int64_t c,
                             bool frame_video, int64_t nts) {
  VllmPlacement out;
  const auto first_at_or_after = std::lower_bound(starts.begin(), starts.end(), c);
  if (frame_video && first_at_or_after != starts.begin()) {
    const int64_t last = *(first_at_or_after - 1);
    if (c <= last + nts + 1) {
      const int64_t media = media_before[last];
      out.found = true;
      out.at = media == 0 ? last - nts : last + 1 - media;
      return out;
    }
  }
  if (first_at_or_after == starts.end()) return out;
  out.found = true;
  out.at = frame_video ? *first_at_or_after - nts : *first_at_or_after + 1;
  return out;
}

}  // namespace

std::vector<VllmDefect> FindVllmDefects(const SpecialTokens& ids,
                                        absl::Span<const int64_t> tokens,
                                        const VllmRequest& request,
                                        const std::vector<const MultiModalFeature*>& sorted,
                                        const std::vector<std::vector<Frame>>& frames_of,
                                        bool frames_family, const MergeDivisor& merge,
                                        const std::vector<int64_t>& bases) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  std::vector<VllmDefect> defects;
  std::vector<int64_t> starts;
  std::vector<int64_t> media_before(n + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (tokens[i] == ids.vision_start) starts.push_back(i);
    media_before[i + 1] = media_before[i] + (tokens[i] == ids.image || tokens[i] == ids.video);
  }
  int64_t c = 0, initial_st = 0;
  for (size_t s = 0; s < sorted.size(); ++s) {
    const MultiModalFeature& f = *sorted[s];
    const size_t index = sorted[s] - request.features.data();
    const bool frame_video = frames_family && f.modality == Modality::kVideo;
    const auto moved = [&](int64_t at) {
      return absl::StrCat("vLLM writes its ", f.length, " positions at tokens [", at, ", ",
                          at + f.length, ") instead of its placeholder [", f.offset, ", ",
                          f.offset + f.length, ")");
    };
    if (!frames_family) {
      // E2: get_mrope_input_positions steps past the unpruned grid.
      if (f.offset < initial_st) {
        defects.push_back({index, "E2", absl::StrCat(
            "vLLM raises ValueError: its initial positions step past the unpruned video to ",
            initial_st, ", beyond this item's offset ", f.offset)});
      }
      initial_st = f.offset + f.grid.t * merge.Quotient(f.grid.h) *
                                  merge.Quotient(f.grid.w);
    }
    const int64_t nts = frame_video ? frames_of[s][0].start - f.offset : 0;
    const VllmPlacement vllm = VllmWriteIndex(starts, media_before, c, frame_video, nts);
    const bool outer_pair = frame_video && f.offset > 0 && tokens[f.offset - 1] == ids.vision_start;
    if (!vllm.found) {
      defects.push_back({index, "E4", "vLLM finds no vision_start at or after the rows it "
                                           "has written and raises IndexError"});
    } else if (vllm.at < 0) {
      defects.push_back({index, "E5", absl::StrCat("vLLM's slice starts at ", vllm.at,
                                                        " and it raises RuntimeError")});
    } else if (vllm.at != f.offset) {
      defects.push_back({index, outer_pair ? "E5" : "E4", moved(vllm.at)});
    } else if (frame_video && f.offset == 0) {
      defects.push_back({index, "index -1", absl::StrCat(
          "vLLM takes this video's base from the prompt's last initial position (index -1): ",
          bases[s] - 1, "; reproduced")});
      defects.back().reproduced = true;
    }
    c += f.length;
  }
  return defects;
}

}  // namespace vllm_internal
}  // namespace mrope
