// GLM-4.1V / GLM-4.5V prompts (tests/golden/README.md, "GLM-4.1V and GLM-4.5V"): a video is
// <|begin_of_video|>, per frame <|begin_of_image|> frame tokens <|end_of_image|> timestamp,
// then <|end_of_video|>, with the image token for frames. The README's worked example from
// token ids and from spans, and the refusals of what HF gets wrong silently or by crashing.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/positions/batch.h"
#include "tests/testing/positions_testing.h"

namespace mrope {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kImageStart = 151339;
constexpr int64_t kImageEnd = 151340;
constexpr int64_t kVideoStart = 151341;
constexpr int64_t kVideoEnd = 151342;
constexpr int64_t kImage = 151343;  // GLM-4.1V; frames use it too
constexpr int64_t kVideo = 151344;
constexpr int64_t kText = 100;

// Appends `n` text tokens.
void Text(std::vector<int64_t>& ids, int n) { ids.insert(ids.end(), n, kText); }

// Appends <|begin_of_image|> n x <|image|> (and <|end_of_image|> when closed).
void ImageBlock(std::vector<int64_t>& ids, int n, bool closed = true) {
  ids.push_back(kImageStart);
  ids.insert(ids.end(), n, kImage);
  if (closed) ids.push_back(kImageEnd);
}

// A whole video as Glm4vProcessor writes it: `frames` frames of `tokens` tokens, each followed
// by a one-token timestamp.
void Video(std::vector<int64_t>& ids, int frames, int tokens) {
  ids.push_back(kVideoStart);
  for (int k = 0; k < frames; ++k) {
    ImageBlock(ids, tokens);
    Text(ids, 1);
  }
  ids.push_back(kVideoEnd);
}

std::string Plan(const TestBatch& batch, absl::string_view preset = "glm4v") {
  return std::string(PlanBatch(Preset(preset), batch.View()).status().message());
}

// README example glm4v/case_001 (`T28 V3x22x34@ts0,1,2 T10`, L = 610): frames at 30, 50, 70
// (each 11x17, T = its start), timestamps and brackets as text, delta -510, decode at 100.
TEST(Glm, WorkedExampleFromTokenIds) {
  std::vector<int64_t> ids;
  Text(ids, 28);
  Video(ids, 3, 11 * 17);
  Text(ids, 10);
  ASSERT_EQ(ids.size(), 610u);
  TestBatch batch = OneRow(ids);
  batch.media.video_grid_thw = {{3, 22, 34}};
  auto plan = PlanBatch(Preset("glm4v"), batch.View());
  ASSERT_TRUE(plan.ok()) << plan.status();
  const SequencePositions& seq = plan->rows[0];
  const auto all = AllPositions(seq);
  EXPECT_EQ(all.t[29], 29);  // <|begin_of_image|> of frame 0
  const int64_t frame0 = 30, frame1 = frame0 + 187 + 3, frame2 = frame1 + 187 + 3;
  EXPECT_THAT((std::vector<int64_t>{all.t[frame0], all.h[frame0], all.w[frame0]}),
              ElementsAre(30, 30, 30));
  EXPECT_THAT((std::vector<int64_t>{all.t[frame0 + 186], all.h[frame0 + 186],
                                    all.w[frame0 + 186]}),
              ElementsAre(30, 40, 46));
  EXPECT_EQ(all.t[frame1], 50);
  EXPECT_EQ(all.t[frame2], 70);
  EXPECT_EQ(all.t[609], 99);
  EXPECT_EQ(plan->layouts[0].delta, 100 - 610);
  const auto decode = Window(seq, 610, 613);
  EXPECT_THAT(decode.t, ElementsAre(100, 101, 102));
  EXPECT_THAT(decode.w, ElementsAre(100, 101, 102));
}

// The same prompt given as spans: a frame is a one-frame video block, the brackets and
// timestamps are text.
TEST(Glm, SpansGiveTheSamePositions) {
  const Grid frame = {1, 22, 34};
  std::vector<Span> spans = {Span::Text(28 + 1)};  // text, <|begin_of_video|>
  for (int k = 0; k < 3; ++k) {
    spans.push_back(Span::Video(frame, 1.0f));
    spans.push_back(Span::Text(k < 2 ? 1 : 2));  // timestamp (+ <|end_of_video|>)
  }
  spans.push_back(Span::Text(10));
  const auto seq = Build("glm4v", spans);
  ASSERT_EQ(seq.num_tokens(), 610);
  EXPECT_EQ(seq.max_position(), 99);
  const auto all = AllPositions(seq);
  EXPECT_EQ(all.t[30], 30);
  EXPECT_EQ(all.t[220], 50);
  EXPECT_EQ(all.h[220 + 186], 60);
  EXPECT_EQ(all.t[410], 70);
}

// GLM-4.5V reads its own ids (151363 image, 151364 video) with GLM-4.1V's rules.
TEST(Glm, Glm45vUsesItsOwnImageId) {
  std::vector<int64_t> ids = {kText, kImageStart, 151363, 151363, 151363, 151363, kImageEnd};
  TestBatch batch = OneRow(ids);
  batch.media.image_grid_thw = {{1, 4, 4}};
  EXPECT_EQ(Plan(batch, "glm4v_moe"), "");
  EXPECT_THAT(Plan(batch, "glm4v"),
              HasSubstr("row 0, token 2: image_start must be followed by an image token, "
                        "found 151363"));
}

// A prompt may end on the last token of an image or of a video's last frame (quirk G3).
TEST(Glm, OpenImageAndOpenLastFrame) {
  std::vector<int64_t> image;
  Text(image, 2);
  ImageBlock(image, 4, /*closed=*/false);
  TestBatch batch = OneRow(image);
  batch.media.image_grid_thw = {{1, 4, 4}};
  EXPECT_EQ(Plan(batch), "");

  std::vector<int64_t> video = {kVideoStart};
  ImageBlock(video, 2);
  Text(video, 1);
  ImageBlock(video, 2, /*closed=*/false);
  batch = OneRow(video);
  batch.media.video_grid_thw = {{2, 2, 4}};
  EXPECT_EQ(Plan(batch), "");
}

// HF raises a shape mismatch for an image run cut short; mrope names the block.
TEST(Glm, ImageCutInsideItsTokens) {
  std::vector<int64_t> ids;
  Text(ids, 2);
  ImageBlock(ids, 3, /*closed=*/false);
  TestBatch batch = OneRow(ids);
  batch.media.image_grid_thw = {{1, 4, 4}};
  EXPECT_THAT(Plan(batch), HasSubstr("row 0, token 2: image block has 3 tokens but "
                                     "image_grid_thw[0] gives 4"));
}

// A video cut between frames leaves HF's video cursor inside it: the next video is read with
// the wrong grid (silently wrong positions when the sizes match). Refused at the row's end and
// at an early <|end_of_video|>.
TEST(Glm, VideoCutBetweenFrames) {
  std::vector<int64_t> ids = {kVideoStart};
  ImageBlock(ids, 2);
  Text(ids, 1);
  TestBatch batch = OneRow(ids);
  batch.media.video_grid_thw = {{2, 2, 4}};
  EXPECT_THAT(Plan(batch), HasSubstr("row 0, token 6: row ends inside the video opened at "
                                     "token 0 after 1 frames, but video_grid_thw[0] has t = 2"));
  ids.push_back(kVideoEnd);
  Video(ids, 2, 2);
  batch = OneRow(ids);
  batch.media.video_grid_thw = {{2, 2, 4}, {2, 2, 4}};
  EXPECT_THAT(Plan(batch), HasSubstr("row 0, token 6: video_end closes the video opened at "
                                     "token 0 after 1 frames"));
  // An open last frame of a video that has more frames to come is a cut too.
  ids = {kVideoStart};
  ImageBlock(ids, 2, /*closed=*/false);
  batch = OneRow(ids);
  batch.media.video_grid_thw = {{2, 2, 4}};
  EXPECT_THAT(Plan(batch), HasSubstr("after 1 frames, but video_grid_thw[0] has t = 2"));
}

TEST(Glm, MoreFramesThanTheGrid) {
  std::vector<int64_t> ids;
  Video(ids, 3, 2);
  TestBatch batch = OneRow(ids);
  batch.media.video_grid_thw = {{2, 2, 4}};
  EXPECT_THAT(Plan(batch), HasSubstr("row 0, token 11: frame 3 of the video opened at token 0, "
                                     "but video_grid_thw[0] has t = 2"));
}

// Two frames with no token between them are one run of twice a frame's tokens (HF: shape
// mismatch).
TEST(Glm, FramesWithNothingBetween) {
  std::vector<int64_t> ids = {kVideoStart, kImageStart};
  ids.insert(ids.end(), 4, kImage);
  ids.push_back(kImageEnd);
  ids.push_back(kVideoEnd);
  TestBatch batch = OneRow(ids);
  batch.media.video_grid_thw = {{2, 2, 4}};
  EXPECT_THAT(Plan(batch), HasSubstr("video frame block has 4 tokens but video_grid_thw[0] "
                                     "(one frame) gives 2"));
}

TEST(Glm, BracketErrors) {
  TestBatch batch = OneRow({kVideoEnd, kText});
  EXPECT_THAT(Plan(batch), HasSubstr("row 0, token 0: video_end with no open video"));

  batch = OneRow({kVideoStart, kText, kVideoStart});
  batch.media.video_grid_thw = {{1, 2, 4}, {1, 2, 4}};
  EXPECT_THAT(Plan(batch), HasSubstr("row 0, token 2: video_start inside the video opened at "
                                     "token 0"));

  batch = OneRow({kVideoStart, kText, kVideoEnd});
  EXPECT_THAT(Plan(batch), HasSubstr("video 1 but video_grid_thw has 0 entries"));
}

// The processor never writes the video id: frames are image tokens.
TEST(Glm, VideoTokenIdInThePrompt) {
  TestBatch batch = OneRow({kText, kVideo, kText});
  batch.media.video_grid_thw = {{1, 2, 2}};
  EXPECT_THAT(Plan(batch), HasSubstr("row 0, token 1: video_token_id 151344 in the prompt: "
                                     "glm4v writes video frames with image_token_id 151343"));
  batch = OneRow({kImageStart, kVideo, kImageEnd});
  EXPECT_THAT(Plan(batch), HasSubstr("image_start must be followed by an image token, found "
                                     "151344"));
}

// Spans: a GLM video frame block has t = 1, as for Qwen3-VL.
TEST(Glm, MultiFrameVideoSpanIsRefused) {
  auto seq = SequencePositions::Create(Preset("glm4v"), {Span::Video({2, 2, 4}, 1.0f)});
  EXPECT_THAT(std::string(seq.status().message()),
              HasSubstr("a glm4v video is one block per frame"));
}

}  // namespace
}  // namespace mrope
