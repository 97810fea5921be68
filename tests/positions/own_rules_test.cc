// The rules of the families whose only reference is vLLM (isaac, keye, openpangu_vl presets),
// as small worked examples of their get_mrope_input_positions (vllm/model_executor/models/
// isaac.py, keye.py, openpangu_vl.py in vLLM 0.33.0); python/tests/test_reference_vllm.py
// checks them against vLLM's own code on seeded random requests.

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/model/model_family.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/sequence_positions.h"
#include "mrope/positions/vllm_evs.h"
#include "mrope/positions/vllm_request.h"
#include "tests/testing/positions_testing.h"

namespace mrope {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Span Unbracketed(Span span) {
  span.bracketed = false;
  return span;
}

std::vector<int64_t> Slice(const std::vector<int64_t>& v, int64_t begin, int64_t end) {
  return {v.begin() + begin, v.begin() + end};
}

// Isaac: an image's h and w are its row and column (no start); text between images resumes at
// the image's max + 1, the text after the last image at its t + 1.
TEST(OwnRules, IsaacSpatialFromZeroAndFinalTextAfterTheLastTime) {
  const auto seq = Build("isaac", {Span::Text(2), Unbracketed(Span::Image({1, 16, 4})),
                                   Span::Text(3), Unbracketed(Span::Image({1, 32, 2})),
                                   Span::Text(2)});
  const auto all = AllPositions(seq);
  ASSERT_EQ(seq.num_tokens(), 135);
  EXPECT_THAT(Slice(all.t, 2, 66), Each(2));
  EXPECT_THAT(Slice(all.h, 2, 6), Each(0));
  EXPECT_EQ(all.h[65], 15);
  EXPECT_THAT(Slice(all.w, 2, 7), ElementsAre(0, 1, 2, 3, 0));
  EXPECT_THAT(Slice(all.t, 66, 69), ElementsAre(16, 17, 18));  // max(2, 15, 3) + 1
  EXPECT_THAT(Slice(all.t, 69, 133), Each(19));
  EXPECT_EQ(all.h[132], 31);
  EXPECT_THAT(Slice(all.t, 133, 135), ElementsAre(20, 21));  // t 19 + 1, not max 31 + 1
  EXPECT_EQ(seq.max_position(), 31);
  EXPECT_EQ(seq.delta(), 32 - 135);
  EXPECT_THAT(Window(seq, 135, 137).w, ElementsAre(32, 33));
}

// Keye: a video's frames are blocks back to back inside one <vision_start> ... <vision_end>,
// each at the previous frame's max + 1 (h' = 2, w' = 3 after the merge: steps of 3).
TEST(OwnRules, KeyeStacksAVideosFrames) {
  const auto seq = Build("keye", {Span::Text(1), Span::Video({3, 4, 6}, 1.0), Span::Text(1)});
  const auto all = AllPositions(seq);
  ASSERT_EQ(seq.num_tokens(), 22);
  EXPECT_EQ(all.t[1], 1);  // <vision_start>
  EXPECT_THAT(Slice(all.t, 2, 20), ElementsAre(2, 2, 2, 2, 2, 2, 5, 5, 5, 5, 5, 5, 8, 8, 8, 8, 8, 8));
  EXPECT_THAT(Slice(all.h, 2, 8), ElementsAre(2, 2, 2, 3, 3, 3));
  EXPECT_THAT(Slice(all.w, 14, 20), ElementsAre(8, 9, 10, 8, 9, 10));
  EXPECT_THAT(Slice(all.t, 20, 22), ElementsAre(11, 12));  // <vision_end>, text
  EXPECT_EQ(seq.delta(), 13 - 22);
  // The same video as vLLM's placeholder (its t*h'*w' video tokens, markers as text).
  const auto vllm = Build("keye", {Span::Text(2), Unbracketed(Span::Video({3, 4, 6}, 1.0)),
                                   Span::Text(2)});
  EXPECT_EQ(AllPositions(vllm).t, all.t);
  EXPECT_EQ(AllPositions(vllm).w, all.w);
}

// openPangu-VL: vLLM's video placeholder is the frames with two tokens between each two;
// each frame is a block (Qwen3-VL's rule), the two tokens text at its max + 1, + 2.
TEST(OwnRules, OpenPanguVlFramesSeparatedByTwoTokens) {
  const ModelConfig config = Preset("openpangu_vl");
  const int64_t v = config.tokens.video;
  std::vector<int64_t> tokens = {1, 2, v, v, v, v, 3, 4, v, v, v, v, 5};
  MultiModalFeature video;
  video.modality = Modality::kVideo;
  video.offset = 2;
  video.length = 10;
  video.grid = {2, 4, 4};
  VllmRequest request{tokens, {video}};
  auto spans = VllmRequestSpans(config, request);
  ASSERT_TRUE(spans.ok()) << spans.status();
  auto seq = SequencePositions::Create(config, *spans);
  ASSERT_TRUE(seq.ok()) << seq.status();
  const auto all = AllPositions(*seq);
  EXPECT_THAT(all.t, ElementsAre(0, 1, 2, 2, 2, 2, 4, 5, 6, 6, 6, 6, 8));
  EXPECT_THAT(all.h, ElementsAre(0, 1, 2, 2, 3, 3, 4, 5, 6, 6, 7, 7, 8));
  EXPECT_THAT(all.w, ElementsAre(0, 1, 2, 3, 2, 3, 4, 5, 6, 7, 6, 7, 8));

  request.features[0].length = 9;
  EXPECT_THAT(std::string(VllmRequestSpans(config, request).status().message()),
              HasSubstr("placeholder length 9 differs from its 2 frames of 4 video tokens with "
                        "2 tokens between each two (10)"));
  request.features[0].length = 10;
  tokens[7] = v;
  request.input_tokens = tokens;
  EXPECT_THAT(std::string(VllmRequestSpans(config, request).status().message()),
              HasSubstr("token 7 between frames 0 and 1 is the media token"));
}

// The token scan of these families finds blocks as runs of image and video tokens; markers
// are text. openPangu-VL's frames are runs of their own, Keye's video one run.
TEST(OwnRules, TokenScanFindsMediaRuns) {
  const ModelConfig pangu = Preset("openpangu_vl");
  const int64_t v = pangu.tokens.video;
  TestBatch batch = OneRow({1, 2, v, v, v, v, 3, 4, v, v, v, v, 5});
  batch.attention_mask.assign(13, 1);
  batch.media.video_grid_thw = {{2, 4, 4}};
  auto plan = PlanBatch(pangu, batch.View());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(AllPositions(plan->rows[0]).h, ElementsAre(0, 1, 2, 2, 3, 3, 4, 5, 6, 6, 7, 7, 8));

  const ModelConfig keye = Preset("keye");
  const int64_t kv = keye.tokens.video;
  batch = OneRow({7, 151652, kv, kv, kv, kv, kv, kv, kv, kv, 151653});
  batch.attention_mask.assign(11, 1);
  batch.media.video_grid_thw = {{2, 4, 4}};
  plan = PlanBatch(keye, batch.View());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(AllPositions(plan->rows[0]).t, ElementsAre(0, 1, 2, 2, 2, 2, 4, 4, 4, 4, 6));
}

// vLLM prunes no openPangu-VL or Keye video (EVS is Qwen2.5-VL's and Qwen3-VL's): refused.
TEST(OwnRules, NoEvsPath) {
  for (const char* preset : {"openpangu_vl", "keye"}) {
    SCOPED_TRACE(preset);
    const std::vector<int64_t> tokens = {1, 2, 3};
    VllmEvsRequest request;
    request.pruned.input_tokens = tokens;
    EXPECT_THAT(std::string(VllmEvsPositions::Create(Preset(preset), request).status().message()),
                HasSubstr("EVS"));
  }
}

}  // namespace
}  // namespace mrope
