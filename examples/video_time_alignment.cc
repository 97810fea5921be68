// Qwen2.5-VL aligns video positions with time: temporal grid k of a video with s seconds per
// grid gets t = trunc(k * s * tokens_per_second) (tokens_per_second = 2), so the same moment
// gets the same t whatever the frame rate. This example plans one 8-second clip sampled at
// 2 fps and at 4 fps (the processor pairs frames: temporal_patch_size 2, so 1.0 and 0.5 seconds
// per grid) and prints the t of each temporal grid against its time. It then shows HF
// transformers v4's variant (truncate_interval_first: t = k * trunc(s) * 2), which collapses
// every grid of the 4 fps clip onto one t.
//
//   bazel run //examples:video_time_alignment

#include <cstdint>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mrope/positions/sequence_positions.h"
#include "mrope/service/position_service.h"

namespace {

constexpr double kClipSeconds = 8;

struct Sampling {
  const char* name;
  double fps;
  mrope::VideoTimeRounding rounding;
};

// t of each temporal grid, keyed by the grid's start time in seconds.
absl::StatusOr<std::map<double, int64_t>> GridTimes(const Sampling& sampling) {
  auto spec = mrope::PresetModelSpec("qwen2_5_vl");
  if (!spec.ok()) return spec.status();
  spec->positions.video_time_rounding = sampling.rounding;
  auto service = mrope::PositionService::Create(*spec);
  if (!service.ok()) return service.status();

  const double seconds_per_grid = 2 / sampling.fps;  // two frames per temporal grid
  const int64_t grids = static_cast<int64_t>(kClipSeconds / seconds_per_grid);
  const mrope::Grid grid = {grids, 4, 4};  // 4 x 4 patches: 2 x 2 = 4 tokens per grid
  mrope::Prompt prompt;
  prompt.sequences = {{mrope::Span::Text(5),
                       mrope::Span::Video(grid, static_cast<float>(seconds_per_grid)),
                       mrope::Span::Text(3)}};
  auto plan = service->Plan(prompt);
  if (!plan.ok()) return plan.status();
  auto result = service->Fill<int64_t>(*plan, mrope::OutputOptions());
  if (!result.ok()) return result.status();

  // The video's tokens start after the 5 text tokens and <vision_start>; 4 tokens per grid.
  const mrope::PlacedSpan& video = plan->rows[0].spans()[1];
  const int64_t first_media_token = video.first_token + video.start_markers;
  const int64_t video_start = static_cast<int64_t>(video.media_base);
  std::map<double, int64_t> times;
  for (int64_t k = 0; k < grids; ++k) {
    const int64_t token = first_media_token + k * 4;
    times[k * seconds_per_grid] = result->position_ids[token] - video_start;
  }
  return times;
}

absl::Status Run() {
  const Sampling samplings[] = {
      {"2 fps (1.0 s/grid)", 2, mrope::VideoTimeRounding::kScaleThenTruncate},
      {"4 fps (0.5 s/grid)", 4, mrope::VideoTimeRounding::kScaleThenTruncate},
      {"4 fps, HF v4", 4, mrope::VideoTimeRounding::kTruncateIntervalFirst},
  };
  std::vector<std::map<double, int64_t>> tables;
  for (const Sampling& sampling : samplings) {
    auto times = GridTimes(sampling);
    if (!times.ok()) return times.status();
    tables.push_back(*times);
  }
  std::cout << "t offset (from the video's first position) of the temporal grid starting at "
               "each second of an 8 s clip, Qwen2.5-VL, tokens_per_second 2\n\n";
  std::string header = absl::StrFormat("%-8s", "second");
  for (const Sampling& sampling : samplings) absl::StrAppendFormat(&header, "%-22s", sampling.name);
  std::cout << absl::StripTrailingAsciiWhitespace(header) << "\n";
  bool aligned = true;
  for (const auto& [second, t_half] : tables[1]) {
    std::string line = absl::StrFormat("%-8.1f", second);
    for (const auto& table : tables) {
      const auto it = table.find(second);
      absl::StrAppendFormat(&line, "%-22s", it == table.end() ? "" : absl::StrCat(it->second));
    }
    std::cout << absl::StripTrailingAsciiWhitespace(line) << "\n";
    const auto at_2fps = tables[0].find(second);
    if (at_2fps != tables[0].end() && at_2fps->second != t_half) aligned = false;
  }
  if (!aligned) return absl::InternalError("2 fps and 4 fps grids disagree at a shared second");
  std::cout << "\nscale_then_truncate (vLLM, SGLang, TensorRT-LLM): same time, same t at both "
               "frame rates (t = 2 x seconds).\n"
               "truncate_interval_first (HF v4): trunc(0.5) = 0 puts every grid of the 4 fps "
               "clip at t offset 0.\n";
  return absl::OkStatus();
}

}  // namespace

int main() {
  const absl::Status status = Run();
  if (!status.ok()) {
    std::cerr << "video_time_alignment: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
