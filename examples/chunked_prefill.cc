// A runtime's view: plan a prompt once, then ask for positions window by window. Chunked
// prefill feeds the prompt in chunks of 32 tokens; decoding then asks for one token at a time
// past the prompt, where every axis takes index + delta. The example checks both against the
// positions of the whole prompt.
//
//   bazel run //examples:chunked_prefill

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mrope/service/position_service.h"

namespace {

constexpr int64_t kChunk = 32;
constexpr int64_t kDecodeSteps = 5;

absl::Status Run() {
  auto spec = mrope::PresetModelSpec("qwen2_vl");
  if (!spec.ok()) return spec.status();
  auto service = mrope::PositionService::Create(*spec);
  if (!service.ok()) return service.status();

  // System text, an image (1 x 12 x 16 patches -> 48 tokens), a question, a short video.
  mrope::Prompt prompt;
  prompt.sequences = {{mrope::Span::Text(14), mrope::Span::Image({1, 12, 16}),
                       mrope::Span::Text(9), mrope::Span::Video({4, 8, 8}, 1.0f),
                       mrope::Span::Text(6)}};
  auto plan = service->Plan(prompt);  // O(spans): nothing per token yet
  if (!plan.ok()) return plan.status();
  const int64_t n = plan->rows[0].num_tokens();
  const double delta = plan->rows[0].delta();
  std::cout << "prompt of " << n << " tokens, delta " << delta << "\n";

  auto whole = service->Fill<int64_t>(*plan, mrope::OutputOptions());
  if (!whole.ok()) return whole.status();

  bool all_match = true;
  for (int64_t begin = 0; begin < n + kDecodeSteps;) {
    const bool prefill = begin < n;
    const int64_t end = prefill ? std::min(begin + kChunk, n) : begin + 1;
    mrope::OutputOptions options;
    options.window = mrope::TokenWindow{begin, end};
    auto part = service->Fill<int64_t>(*plan, options);
    if (!part.ok()) return part.status();
    const int64_t w = end - begin;
    bool match = true;
    for (int axis = 0; axis < 3; ++axis) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t want = i < n ? whole->position_ids[axis * n + i]
                                   : i + static_cast<int64_t>(delta);
        match = match && part->position_ids[axis * w + i - begin] == want;
      }
    }
    all_match = all_match && match;
    std::string ranges;
    for (int axis = 0; axis < 3; ++axis) {
      const auto first = part->position_ids.begin() + axis * w;
      const auto [lo, hi] = std::minmax_element(first, first + w);
      absl::StrAppendFormat(&ranges, "%c %3d..%-3d  ", "thw"[axis], *lo, *hi);
    }
    std::cout << absl::StrFormat("%-8s tokens [%3d, %3d): %s%s\n", prefill ? "prefill" : "decode",
                                 begin, end, ranges, match ? "ok" : "MISMATCH");
    begin = end;
  }
  if (!all_match) return absl::InternalError("a window differs from the whole prompt");
  std::cout << "every chunk and decode step matches the whole prompt's positions\n";
  return absl::OkStatus();
}

}  // namespace

int main() {
  const absl::Status status = Run();
  if (!status.ok()) {
    std::cerr << "chunked_prefill: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
