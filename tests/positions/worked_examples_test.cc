// The worked examples of tests/golden/README.md, rebuilt from spans (no token scan) so each
// one reads as the README tells it.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/sequence_positions.h"
#include "tests/testing/positions_testing.h"

namespace mrope {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

std::vector<int64_t> Slice(const std::vector<int64_t>& v, int64_t begin, int64_t end) {
  return {v.begin() + begin, v.begin() + end};
}

// Quirk 1, qwen2_5_vl/case_070 `T1 I1x2x2 T2 V4x2x14@0.25s T2`: HF truncates 0.25 s to 0, so
// every temporal grid of the video sits at T = 7; vLLM gives T = 7, 7, 8, 8.
TEST(WorkedExamples, Qwen25VlTruncatesTheIntervalButVllmScalesFirst) {
  const std::vector<Span> spans = {Span::Text(1), Span::Image({1, 2, 2}), Span::Text(2),
                                   Span::Video({4, 2, 14}, 0.25f), Span::Text(2)};
  const auto hf = AllPositions(Build("qwen2_5_vl_hf", spans));
  const auto vllm = AllPositions(Build("qwen2_5_vl_vllm", spans));
  // Video tokens: 7 (4 grids of 1x7 after the merge), after the vision_start at index 6.
  const int64_t video = 7;
  for (int k = 0; k < 4; ++k) {
    EXPECT_THAT(Slice(hf.t, video + 7 * k, video + 7 * (k + 1)), Each(7));
    EXPECT_THAT(Slice(vllm.t, video + 7 * k, video + 7 * (k + 1)), Each(7 + k / 2));
    EXPECT_THAT(Slice(hf.w, video + 7 * k, video + 7 * (k + 1)),
                ElementsAre(7, 8, 9, 10, 11, 12, 13));
  }
  // Both continue at 14 (<vision_end>) and decode at 17, 18, 19.
  EXPECT_EQ(hf.t[video + 28], 14);
  EXPECT_EQ(vllm.t[video + 28], 14);
  const auto seq = Build("qwen2_5_vl_hf", spans);
  EXPECT_THAT(Window(seq, seq.num_tokens(), seq.num_tokens() + 3).t, ElementsAre(17, 18, 19));
}

// Quirk 1 (positive delta), qwen2_5_vl/case_026 `T3 V16x2x2@2.5s T3`: HF steps by
// trunc(2.5) * 2 = 4, vLLM by 5.
TEST(WorkedExamples, PositiveDeltaWhenTimeOutrunsTokens) {
  const std::vector<Span> spans = {Span::Text(3), Span::Video({16, 2, 2}, 2.5f), Span::Text(3)};
  const auto hf_seq = Build("qwen2_5_vl_hf", spans);
  const auto hf = AllPositions(hf_seq);
  EXPECT_EQ(hf_seq.num_tokens(), 24);
  EXPECT_EQ(hf.t[4 + 15], 4 + 60);  // last grid
  EXPECT_THAT(Slice(hf.t, 20, 24), ElementsAre(65, 66, 67, 68));  // <vision_end>, text
  EXPECT_EQ(hf_seq.delta(), 45);
  const auto vllm_seq = Build("qwen2_5_vl_vllm", spans);
  EXPECT_EQ(AllPositions(vllm_seq).t[4 + 15], 4 + 75);
  EXPECT_EQ(vllm_seq.delta(), 60);
}

// Quirk 4, qwen2_vl/case_065 `T4 Iopen1x24x10`: the prompt ends inside the image at
// (5, 16, 9); the next tokens still get max + 1 + k on every axis.
TEST(WorkedExamples, DecodeAfterAnOpenBlockIsTheSameOnAllAxes) {
  Span open = Span::Image({1, 24, 10});
  open.closed = false;
  const auto seq = Build("qwen2_vl", {Span::Text(4), open});
  EXPECT_EQ(seq.num_tokens(), 65);
  const auto all = AllPositions(seq);
  EXPECT_EQ(all.t.back(), 5);
  EXPECT_EQ(all.h.back(), 16);
  EXPECT_EQ(all.w.back(), 9);
  const auto decode = Window(seq, 65, 68);
  EXPECT_THAT(decode.t, ElementsAre(17, 18, 19));
  EXPECT_THAT(decode.h, ElementsAre(17, 18, 19));
  EXPECT_THAT(decode.w, ElementsAre(17, 18, 19));
}

// Quirks 2 and 5, qwen2_5_vl/case_017 (rows T1, T4, T44 left-padded to 44): with no grid in
// the batch, padding holds 1 and counts in the maximum, so the 1-token row decodes at 2, 3, 4
// (vLLM: 1, 2, 3).
TEST(WorkedExamples, TextOnlyBatchCountsPaddingInTheMaximum) {
  TestBatch batch;
  batch.batch_size = 3;
  batch.seq_len = 44;
  batch.input_ids.assign(3 * 44, 100);
  batch.attention_mask.assign(3 * 44, 1);
  for (int c = 0; c < 43; ++c) batch.attention_mask[c] = 0;       // row 0: T1
  for (int c = 0; c < 40; ++c) batch.attention_mask[44 + c] = 0;  // row 1: T4
  auto hf = PlanBatch(Preset("qwen2_5_vl_hf"), batch.View());
  ASSERT_TRUE(hf.ok()) << hf.status();
  std::vector<int64_t> positions;
  ASSERT_TRUE(FillBatch(*hf, positions).ok());
  EXPECT_THAT(Slice(positions, 0, 43), Each(1));
  EXPECT_EQ(positions[43], 0);
  EXPECT_EQ(hf->layouts[0].delta, 2 - 44);
  std::vector<int64_t> decode;
  ASSERT_TRUE(FillDecode(*hf, 3, decode).ok());
  EXPECT_THAT(Slice(decode, 0, 3), ElementsAre(2, 3, 4));
  EXPECT_THAT(Slice(decode, 3, 6), ElementsAre(4, 5, 6));  // T4: max 3, no quirk

  auto vllm = PlanBatch(Preset("qwen2_5_vl_vllm"), batch.View());
  ASSERT_TRUE(vllm.ok()) << vllm.status();
  ASSERT_TRUE(FillDecode(*vllm, 3, decode).ok());
  EXPECT_THAT(Slice(decode, 0, 3), ElementsAre(1, 2, 3));
  ASSERT_TRUE(FillBatch(*vllm, positions).ok());
  EXPECT_THAT(Slice(positions, 0, 43), Each(0));  // vLLM has no padding: the generator's 0
}

// Quirk 6c: Qwen2.5-Omni's float32 time index is 1 below exact arithmetic for some (spg, k).
TEST(WorkedExamples, Qwen25OmniTimeIndexIsFloat32Truncated) {
  struct Row {
    float spg;
    int k;
    int64_t expected;
  };
  for (const Row& row : {Row{0.7f, 6, 104}, Row{0.7f, 12, 209}, Row{0.9f, 6, 134},
                         Row{1.4f, 3, 104}, Row{1.8f, 3, 134}}) {
    // One video of k + 1 single-token frames; the block's media base is 1.
    const auto seq = Build("qwen2_5_omni", {Span::Video({row.k + 1, 2, 2}, row.spg)});
    EXPECT_EQ(AllPositions(seq).t[1 + row.k], 1 + row.expected) << row.spg << " k=" << row.k;
  }
}

// Quirk 6b/6d, the second video of qwen2_5_omni/case_046 (`V11x6x2@1.5s+A1497 T3`): its
// media start at 592 (the shared start markers sit at 591). The video's last grid is at
// 592 + 375 = 967, but the audio (374 tokens, 592..965) is appended last, so the end markers
// take 966 and the text 967..969, the first of them equal to the video's last T.
TEST(WorkedExamples, Qwen25OmniAudioInVideoEndsAfterTheLastChunk) {
  ModelConfig config = Preset("qwen2_5_omni");
  const int64_t audio_tokens = AudioTokenCount(PolicyFor(config).audio_length, 1497);
  ASSERT_EQ(audio_tokens, 374);
  auto seq = SequencePositions::Create(
      config, {Span::Text(591), Span::AudioInVideo({11, 6, 2}, 1.5f, audio_tokens),
               Span::Text(3)});
  ASSERT_TRUE(seq.ok()) << seq.status();
  const auto all = AllPositions(*seq);
  EXPECT_THAT(Slice(all.t, 591, 593), ElementsAre(591, 591));  // shared start markers
  const int64_t end = 591 + 2 + 33 + 374;
  EXPECT_EQ(*std::max_element(all.t.begin() + 593, all.t.begin() + end), 967);
  EXPECT_THAT(Slice(all.t, end, end + 5), ElementsAre(966, 966, 967, 968, 969));
  EXPECT_EQ(seq->max_position(), 969);
}

// Quirk 7a, qwen3_omni/case_018 `T11 V3x2x50@1.33333s T4` (spg = float32(4/3)): float32
// positions.
TEST(WorkedExamples, Qwen3OmniPositionsAreFloat32) {
  const auto seq = Build("qwen3_omni", {Span::Text(11), Span::Video({3, 2, 50}, 4.0f / 3.0f),
                                        Span::Text(4)});
  const auto all = AllPositions<float>(seq);
  EXPECT_EQ(all.t[12], 12.0f);
  EXPECT_EQ(all.t[12 + 25], 29.333334f);
  EXPECT_EQ(all.t[12 + 50], 46.666668f);
  EXPECT_EQ(all.t[12 + 75], 47.666668f);  // <vision_end>
  EXPECT_THAT(std::vector<float>(all.t.begin() + 88, all.t.end()),
              ElementsAre(48.666668f, 49.666668f, 50.666668f, 51.666668f));
  EXPECT_EQ(static_cast<float>(seq.delta()), -39.333332f);
  EXPECT_THAT(Window<float>(seq, 92, 95).t, ElementsAre(52.666668f, 53.666668f, 54.666668f));
  // Integer outputs refuse fractional positions.
  std::vector<int64_t> t(1), h(1), w(1);
  EXPECT_FALSE(seq.Fill<int64_t>(0, 1, {t.data(), h.data(), w.data()}).ok());
}

// Quirk 7c, row 2 of qwen3_omni/case_075 (`T13 V3x4x50@0.333333s+A112 T9`): video and audio
// merged token by token by T, video first on ties; the text lands inside the video's W range.
TEST(WorkedExamples, Qwen3OmniAudioInVideoMergesByTime) {
  ModelConfig config = Preset("qwen3_omni");
  const int64_t audio_tokens = AudioTokenCount(PolicyFor(config).audio_length, 112);
  ASSERT_EQ(audio_tokens, 15);
  auto seq = SequencePositions::Create(
      config, {Span::Text(13), Span::AudioInVideo({3, 4, 50}, 1.0f / 3.0f, audio_tokens),
               Span::Text(9)});
  ASSERT_TRUE(seq.ok()) << seq.status();
  const auto all = AllPositions<float>(*seq);
  EXPECT_THAT(std::vector<float>(all.t.begin() + 13, all.t.begin() + 15), ElementsAre(13, 14));
  int64_t i = 15;
  const auto expect_video = [&](float t) {
    for (int j = 0; j < 50; ++j, ++i) {
      ASSERT_EQ(all.t[i], t) << i;
      ASSERT_EQ(all.h[i], 15 + j / 25) << i;
      ASSERT_EQ(all.w[i], 15 + j % 25) << i;
    }
  };
  const auto expect_audio = [&](float from, float to) {
    for (float p = from; p <= to; ++p, ++i) ASSERT_EQ(all.t[i], p) << i;
  };
  expect_video(15);
  expect_audio(15, 19);
  expect_video(19.333334f);
  expect_audio(20, 23);
  expect_video(23.666668f);
  expect_audio(24, 29);
  EXPECT_EQ(all.t[i++], 30);  // <audio_end>
  EXPECT_EQ(all.t[i++], 31);  // <vision_end>
  EXPECT_EQ(all.t[i], 32);    // text 32..40
  EXPECT_EQ(all.t.back(), 40);
  EXPECT_EQ(Window<float>(*seq, seq->num_tokens(), seq->num_tokens() + 1).t[0], 41);
}

// Quirk 8, qwen2_5_vl/case_063 `T2 I2x10x30 T9`: HF gives images interval 0, so both temporal
// groups of a t=2 image sit at T = 3; Qwen2-VL numbers them 3 and 4.
TEST(WorkedExamples, Qwen25VlImagesUseIntervalZero) {
  const std::vector<Span> spans = {Span::Text(2), Span::Image({2, 10, 30}), Span::Text(9)};
  const auto qwen25 = AllPositions(Build("qwen2_5_vl_hf", spans));
  const auto qwen2 = AllPositions(Build("qwen2_vl", spans));
  EXPECT_THAT(Slice(qwen25.t, 3, 3 + 150), Each(3));
  EXPECT_THAT(Slice(qwen2.t, 3, 3 + 75), Each(3));
  EXPECT_THAT(Slice(qwen2.t, 3 + 75, 3 + 150), Each(4));
}

// Quirk 10, qwen2_5_vl_vllm/case_064: float32(0.7) * 2 is 1.3999999761581421, so k = 5 gives 6.
TEST(WorkedExamples, VllmScalesTheFloat32Interval) {
  const auto seq = Build("qwen2_5_vl_vllm", {Span::Text(1), Span::Video({11, 2, 2}, 0.7f)});
  const auto all = AllPositions(seq);
  std::vector<int64_t> offsets;
  for (int k = 0; k < 11; ++k) offsets.push_back(all.t[2 + k] - 2);
  EXPECT_THAT(offsets, ElementsAreArray({0, 1, 2, 4, 5, 6, 8, 9, 11, 12, 13}));
}

}  // namespace
}  // namespace mrope
