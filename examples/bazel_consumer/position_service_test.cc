// M-RoPE positions through @mrope//mrope/service:position_service, checked against Qwen2-VL's
// rule (HF get_rope_index): text advances t, h and w together; an image's merged patches share
// one t and spread over h (rows) and w (columns) from the running position; text after it
// continues at the largest position + 1.

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "mrope/service/position_service.h"

namespace {

// positions[axis][token] of `text_before` text tokens, one image of merged grid h x w (t == 1),
// then `text_after` text tokens, by the rule above.
std::array<std::vector<int64_t>, 3> RulePositions(int64_t text_before, int64_t h, int64_t w,
                                                  int64_t text_after) {
  std::array<std::vector<int64_t>, 3> positions;
  auto text = [&](int64_t first, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      for (auto& axis : positions) axis.push_back(first + i);
    }
  };
  text(0, text_before);
  for (int64_t row = 0; row < h; ++row) {
    for (int64_t column = 0; column < w; ++column) {
      positions[0].push_back(text_before);
      positions[1].push_back(text_before + row);
      positions[2].push_back(text_before + column);
    }
  }
  text(text_before + std::max(h, w), text_after);
  return positions;
}

TEST(PositionServiceFromAnotherWorkspace, Qwen2VlImagePromptFollowsTheRule) {
  absl::StatusOr<mrope::ModelSpec> spec = mrope::PresetModelSpec("qwen2_vl");
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<mrope::PositionService> service = mrope::PositionService::Create(*spec);
  ASSERT_TRUE(service.ok()) << service.status();
  const mrope::SpecialTokens& tokens = spec->positions.tokens;

  // "<text> x 3 <|vision_start|> <|image_pad|> x 4*6 <|vision_end|> <text> x 5": an image of
  // 8 x 12 patches, merged 2 x 2 into 4 x 6 tokens.
  const mrope::Grid grid = {1, 8, 12};
  const int64_t merge = spec->positions.spatial_merge_size;
  const int64_t h = grid.h / merge, w = grid.w / merge;
  std::vector<int64_t> ids = {101, 102, 103, tokens.vision_start};
  ids.insert(ids.end(), h * w, tokens.image);
  for (int64_t id : {tokens.vision_end, int64_t{104}, int64_t{105}, int64_t{106}, int64_t{107}}) {
    ids.push_back(id);
  }
  mrope::Prompt prompt;
  prompt.batch.batch_size = 1;
  prompt.batch.seq_len = static_cast<int64_t>(ids.size());
  prompt.batch.input_ids = ids;
  prompt.batch.media.image_grid_thw = {grid};
  mrope::OutputOptions options;
  options.decode_steps = 2;

  absl::StatusOr<mrope::PositionResult<int64_t>> result =
      service->Compute<int64_t>(prompt, options);
  ASSERT_TRUE(result.ok()) << result.status();

  const auto expected = RulePositions(/*text_before=*/4, h, w, /*text_after=*/5);
  const int64_t n = static_cast<int64_t>(ids.size());
  ASSERT_EQ(result->shape, (std::vector<int64_t>{3, 1, n}));
  for (int axis = 0; axis < 3; ++axis) {
    EXPECT_EQ(std::vector<int64_t>(result->position_ids.begin() + axis * n,
                                   result->position_ids.begin() + (axis + 1) * n),
              expected[axis])
        << "axis " << axis;
  }
  // Generation continues after the largest position: delta = (last + 1) - n.
  const int64_t delta = expected[0].back() + 1 - n;
  EXPECT_EQ(result->mrope_position_deltas, (std::vector<int64_t>{delta}));
  for (int axis = 0; axis < 3; ++axis) {
    EXPECT_EQ(result->decode_position_ids[axis * 2], n + delta) << "axis " << axis;
    EXPECT_EQ(result->decode_position_ids[axis * 2 + 1], n + delta + 1) << "axis " << axis;
  }
}

TEST(PositionServiceFromAnotherWorkspace, ImageTokensWithoutAGridAreAnError) {
  absl::StatusOr<mrope::ModelSpec> spec = mrope::PresetModelSpec("qwen2_vl");
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<mrope::PositionService> service = mrope::PositionService::Create(*spec);
  ASSERT_TRUE(service.ok()) << service.status();
  const std::vector<int64_t> ids = {101, spec->positions.tokens.vision_start,
                                    spec->positions.tokens.image,
                                    spec->positions.tokens.vision_end};
  mrope::Prompt prompt;
  prompt.batch.batch_size = 1;
  prompt.batch.seq_len = static_cast<int64_t>(ids.size());
  prompt.batch.input_ids = ids;

  absl::StatusOr<mrope::PositionResult<int64_t>> result =
      service->Compute<int64_t>(prompt, mrope::OutputOptions());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
}

}  // namespace
