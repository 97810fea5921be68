// An image + text chat prompt for Qwen2.5-VL, as the HF processor would tokenize it, and its
// M-RoPE positions: the explain table, then the three position rows [3][L].
//
//   bazel run //examples:image_chat
//
// The image is 280 x 224 pixels: 14-pixel patches give a 1 x 16 x 20 grid (image_grid_thw),
// which the 2 x 2 spatial merge turns into 8 x 10 = 80 <|image_pad|> tokens. Text tokens all
// advance t, h and w together; the image's tokens share one t and spread over h (rows) and w
// (columns); the text after the image continues from the largest position + 1.

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mrope/service/explain.h"
#include "mrope/service/position_service.h"

namespace {

// Qwen2 tokenizer ids of the chat template's special tokens.
constexpr int64_t kImStart = 151644;      // <|im_start|>
constexpr int64_t kImEnd = 151645;        // <|im_end|>
constexpr int64_t kVisionStart = 151652;  // <|vision_start|>
constexpr int64_t kVisionEnd = 151653;    // <|vision_end|>
constexpr int64_t kImagePad = 151655;     // <|image_pad|>
constexpr int64_t kNewline = 198;
constexpr int64_t kUser = 872;
constexpr int64_t kAssistant = 77091;

// "<|im_start|>user\n<|vision_start|><|image_pad|> x 80<|vision_end|>Describe this image.
// <|im_end|>\n<|im_start|>assistant\n" (the four text ids of the question are illustrative).
std::vector<int64_t> ChatPrompt(int64_t image_tokens) {
  std::vector<int64_t> ids = {kImStart, kUser, kNewline, kVisionStart};
  ids.insert(ids.end(), image_tokens, kImagePad);
  for (int64_t id : {kVisionEnd, int64_t{74785}, int64_t{419}, int64_t{2168}, int64_t{13},
                     kImEnd, kNewline, kImStart, kAssistant, kNewline}) {
    ids.push_back(id);
  }
  return ids;
}

// One axis of position_ids as "t: 0 1 2 ...", wrapped.
std::string Row(const char* axis, const std::vector<int64_t>& values) {
  std::string out = absl::StrCat(axis, ":");
  size_t line = out.size();
  for (int64_t v : values) {
    const std::string item = absl::StrCat(" ", v);
    if (line + item.size() > 96) {
      out += "\n  ";
      line = 2;
    }
    out += item;
    line += item.size();
  }
  return out + "\n";
}

absl::Status Run() {
  auto spec = mrope::PresetModelSpec("qwen2_5_vl");
  if (!spec.ok()) return spec.status();
  auto service = mrope::PositionService::Create(*spec);
  if (!service.ok()) return service.status();

  mrope::Prompt prompt;
  const mrope::Grid grid = {1, 16, 20};
  const std::vector<int64_t> ids = ChatPrompt(grid.t * grid.h * grid.w / 4);
  prompt.batch.input_ids = ids;  // the batch borrows ids for the calls below
  prompt.batch.batch_size = 1;
  prompt.batch.seq_len = ids.size();
  prompt.batch.media.image_grid_thw = {grid};

  auto plan = service->Plan(prompt);
  if (!plan.ok()) return plan.status();
  auto table = mrope::ExplainPlan(spec->positions, *plan);
  if (!table.ok()) return table.status();
  std::cout << *table << "\n";

  mrope::OutputOptions options;
  options.decode_steps = 3;
  auto result = service->Fill<int64_t>(*plan, options);
  if (!result.ok()) return result.status();
  const int64_t n = result->shape[2];
  std::cout << "position_ids [3][" << n << "]:\n";
  const char* axes[] = {"t", "h", "w"};
  for (int axis = 0; axis < 3; ++axis) {
    std::cout << Row(axes[axis],
                     std::vector<int64_t>(result->position_ids.begin() + axis * n,
                                          result->position_ids.begin() + (axis + 1) * n));
  }
  std::cout << "\nmrope_position_deltas: " << result->mrope_position_deltas[0]
            << "\nthe answer's first tokens get positions "
            << absl::StrJoin(std::vector<int64_t>(result->decode_position_ids.begin(),
                                                  result->decode_position_ids.begin() + 3),
                             ", ")
            << " on every axis\n";
  return absl::OkStatus();
}

}  // namespace

int main() {
  const absl::Status status = Run();
  if (!status.ok()) {
    std::cerr << "image_chat: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
