// One test per malformed input the foundation issue lists: each must be an absl::Status naming
// the problem, never a crash or a silently wrong answer.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/model/model_family.h"
#include "mrope/positions/batch.h"
#include "tests/testing/positions_testing.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kVisionStart = 151652;
constexpr int64_t kVisionEnd = 151653;
constexpr int64_t kImage = 151655;
constexpr int64_t kVideo = 151656;
constexpr int64_t kText = 100;

// `<vision_start>` + n image tokens + `<vision_end>`.
std::vector<int64_t> ImageBlock(int n, int64_t media = kImage) {
  std::vector<int64_t> ids = {kVisionStart};
  ids.insert(ids.end(), n, media);
  ids.push_back(kVisionEnd);
  return ids;
}

// The error message of planning `batch` (empty when it plans fine).
std::string Plan(absl::string_view preset, const TestBatch& batch) {
  return std::string(PlanBatch(Preset(preset), batch.View()).status().message());
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST(Errors, RowEndingInVisionStart) {
  TestBatch batch = OneRow({kText, kText, kVisionStart});
  batch.media.image_grid_thw = {{1, 2, 2}};
  EXPECT_THAT(Plan("qwen2_vl", batch), HasSubstr("row 0, token 2: row ends in vision_start"));
}

TEST(Errors, BlockTokenCountDiffersFromGrid) {
  TestBatch batch = OneRow(ImageBlock(3));
  batch.media.image_grid_thw = {{1, 4, 4}};  // 4 tokens after the 2x2 merge
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr("image block has 3 tokens but image_grid_thw[0] gives 4"));
}

TEST(Errors, MoreBlocksThanGrids) {
  std::vector<int64_t> ids = ImageBlock(1);
  const auto second = ImageBlock(1);
  ids.insert(ids.end(), second.begin(), second.end());
  TestBatch batch = OneRow(ids);
  batch.media.image_grid_thw = {{1, 2, 2}};
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr("image block 2 but image_grid_thw has 1 entries"));
}

TEST(Errors, GridsLeftOver) {
  TestBatch batch = OneRow(ImageBlock(1));
  batch.media.image_grid_thw = {{1, 2, 2}, {1, 2, 2}};
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr("image_grid_thw has 2 entries but the prompt uses 1 (1 left over)"));
}

TEST(Errors, GridNotDivisibleByMergeSize) {
  TestBatch batch = OneRow(ImageBlock(1));
  batch.media.image_grid_thw = {{1, 3, 4}};
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr("h and w must be divisible by spatial_merge_size 2"));
}

TEST(Errors, ZeroOrNegativeGridValues) {
  for (const Grid grid : {Grid{0, 2, 2}, Grid{1, -2, 2}}) {
    TestBatch batch = OneRow(ImageBlock(1));
    batch.media.image_grid_thw = {grid};
    EXPECT_THAT(Plan("qwen2_vl", batch), HasSubstr("must be positive"));
  }
  // Spans built directly by a runtime are checked too.
  auto seq = SequencePositions::Create(Preset("qwen2_vl"), {Span::Image({1, 0, 2})});
  EXPECT_THAT(Message(seq.status()), HasSubstr("grid h must be in [1, max_grid_value"));
}

TEST(Errors, HugeGridsAreRefusedBeforeAnyAllocation) {
  // 2^40 tokens would overflow nothing in int64 but must never be allocated or scanned.
  auto seq = SequencePositions::Create(Preset("qwen2_vl"),
                                       {Span::Image({1 << 20, 1 << 20, 1 << 20})});
  EXPECT_THAT(Message(seq.status()), HasSubstr("max_grid_value = 65536], got 1048576"));
  PositionLimits limits;
  limits.max_grid_tokens = 100;
  seq = SequencePositions::Create(Preset("qwen2_vl"), {Span::Image({4, 20, 20})}, limits);
  EXPECT_THAT(Message(seq.status()),
              HasSubstr("grid 4x20x20 makes 400 tokens, over max_grid_tokens = 100"));
  TestBatch batch = OneRow({kText});
  batch.batch_size = int64_t{1} << 40;
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr("batch_size must be in [1, max_batch_rows = 4096], got 1099511627776"));
}

TEST(Errors, BadSecondsPerGrid) {
  std::vector<int64_t> ids = ImageBlock(1, kVideo);
  for (const float bad : {std::nanf(""), std::numeric_limits<float>::infinity(), -0.5f}) {
    TestBatch batch = OneRow(ids);
    batch.media.video_grid_thw = {{1, 2, 2}};
    batch.media.second_per_grid_ts = {bad};
    EXPECT_THAT(Plan("qwen2_5_vl", batch),
                HasSubstr("second_per_grid_ts[0] must be finite and >= 0"));
  }
  TestBatch batch = OneRow(ids);
  batch.media.video_grid_thw = {{1, 2, 2}};
  batch.media.second_per_grid_ts = {1.0f, 2.0f};
  EXPECT_THAT(Plan("qwen2_5_vl", batch),
              HasSubstr("second_per_grid_ts has 2 entries but video_grid_thw has 1"));
}

TEST(Errors, AttentionMaskShapeAndValues) {
  TestBatch batch = OneRow({kText, kText});
  batch.attention_mask = {1};
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr("attention_mask has 1 entries, expected the shape of input_ids [1][2]"));
  batch.attention_mask = {1, 2};
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr("attention_mask[0][1] must be 0 or 1, got 2"));
}

// Ids are vocabulary indices: negative ids (e.g. the -100 of label masks) and ids above
// kMaxTokenId are refused wherever they sit, not taken as text.
TEST(Errors, TokenIdsOutsideTheVocabularyRange) {
  TestBatch batch = OneRow({kText, -5, kText});
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr("row 0, token 1: input_ids value -5 is not a token id"));

  std::vector<int64_t> ids(20, kText);  // past the scanner's first 8-token block
  ids[13] = -100;
  batch = OneRow(ids);
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr("row 0, token 13: input_ids value -100 is not a token id"));

  ids = ImageBlock(4);
  ids[3] = -1;  // inside the image block, where the run of image tokens stops
  batch = OneRow(ids);
  batch.media.image_grid_thw = {{1, 4, 4}};
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr("row 0, token 3: input_ids value -1 is not a token id"));

  batch = OneRow({kText, kMaxTokenId, kText});
  EXPECT_EQ(Plan("qwen2_vl", batch), "");
  batch = OneRow({kText, kText, kMaxTokenId + 1});
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr(absl::StrCat("row 0, token 2: input_ids value ", kMaxTokenId + 1,
                                     " is not a token id (must be in [0, ", kMaxTokenId,
                                     "])")));

  // A later row: the row index is named too (left padding, mask 0 on the pad).
  batch.batch_size = 2;
  batch.seq_len = 3;
  batch.input_ids = {kText, kText, kText, 0, kText, -7};
  batch.attention_mask = {1, 1, 1, 0, 1, 1};
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr("row 1, token 1: input_ids value -7 is not a token id"));
}

TEST(Errors, MediaTokenOutsideAVisionBlock) {
  TestBatch batch = OneRow({kText, kImage, kText});
  batch.media.image_grid_thw = {{1, 2, 2}};
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr("row 0, token 1: media token 151655 outside a block"));
}

TEST(Errors, Qwen3VlVideoWrittenAsOneBlockOfSeveralFrames) {
  TestBatch batch = OneRow(ImageBlock(3, kVideo));  // 3 frames of 1 token in one block
  batch.media.video_grid_thw = {{3, 2, 2}};
  EXPECT_THAT(Plan("qwen3_vl", batch),
              HasSubstr("video_grid_thw[0] (3 frames) is written as one block; qwen3_vl needs "
                        "one <vision_start>...<vision_end> block per frame"));
  // The same layout is fine for Qwen2-VL.
  EXPECT_EQ(Plan("qwen2_vl", batch), "");
}

TEST(Errors, UnknownModelFamily) {
  EXPECT_THAT(Message(ParseModelFamily("qwen4_vl").status()),
              HasSubstr("unknown model family 'qwen4_vl'; known: qwen2_vl, qwen2_5_vl, "
                        "qwen3_vl, qwen2_5_omni, qwen3_omni, glm4v, glm4v_moe"));
  EXPECT_THAT(Message(PresetConfig("llava").status()),
              HasSubstr("unknown preset 'llava'; known: qwen2_vl, qwen2_vl_hf_v5_2, "
                        "qwen2_vl_hf_v5, qwen2_vl_vllm, qwen2_5_vl, qwen2_5_vl_hf, "));
}

TEST(Errors, OmniBlocksMustBeClosed) {
  const int64_t audio_start = 151647;
  const int64_t audio = 151646;
  TestBatch batch = OneRow({kText, audio_start, audio, audio});  // no <audio_end>
  batch.media.audio_feature_lengths = {8};  // -> 2 audio tokens
  EXPECT_THAT(Plan("qwen2_5_omni", batch),
              HasSubstr("audio block is not closed by its end marker 151648 (row ends)"));
}

TEST(Errors, Int32OutputRefusesValuesThatDoNotFit) {
  const auto seq = Build("qwen2_vl", {Span::Text(10)});
  std::vector<int32_t> t(1), h(1), w(1);
  const int64_t far = (int64_t{1} << 31) + 5;
  EXPECT_THAT(Message(seq.Fill<int32_t>(far, far + 1, {t.data(), h.data(), w.data()})),
              HasSubstr("more than max_decode_steps"));
  PositionLimits limits;
  limits.max_decode_steps = int64_t{1} << 40;
  auto roomy = SequencePositions::Create(Preset("qwen2_vl"), {Span::Text(10)}, limits);
  ASSERT_TRUE(roomy.ok());
  EXPECT_THAT(Message(roomy->Fill<int32_t>(far, far + 1, {t.data(), h.data(), w.data()})),
              HasSubstr("does not fit the requested output type"));
  std::vector<int64_t> t64(1), h64(1), w64(1);
  ASSERT_TRUE(roomy->Fill<int64_t>(far, far + 1, {t64.data(), h64.data(), w64.data()}).ok());
  EXPECT_EQ(t64[0], far);
}

// transformers 5.x token types: hf_v5 needs them, and every run must agree with the ids.
TEST(Errors, TokenTypesRequiredAndCheckedAgainstTheIds) {
  TestBatch batch = OneRow(ImageBlock(4));  // <vs> 4 x image <ve>
  batch.media.image_grid_thw = {{1, 4, 4}};
  EXPECT_THAT(Plan("qwen2_vl_hf_v5", batch),
              HasSubstr("mm_token_type_ids is required: qwen2_vl under hf_v5 finds blocks from "
                        "it"));
  batch.mm_token_type_ids = {0, 1, 1, 1, 1, 1};
  EXPECT_THAT(Plan("qwen2_vl_hf_v5", batch),
              HasSubstr("row 0, token 5: mm_token_type_ids is 1 (image) but the token is 151653, "
                        "not image_token_id 151655"));
  batch.mm_token_type_ids = {0, 0, 1, 1, 1, 0};
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr("row 0, token 1: token 151655 is an image token but mm_token_type_ids "
                        "is 0 there"));
  batch.mm_token_type_ids = {0, 3, 3, 3, 3, 0};
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr("row 0, token 1: mm_token_type_ids value 3 must be 0 (text), 1 (image) "
                        "or 2 (video)"));
  batch.mm_token_type_ids = {0, 1, 1, 1};
  EXPECT_THAT(Plan("qwen2_vl", batch),
              HasSubstr("mm_token_type_ids has 4 entries, expected the shape of input_ids "
                        "[1][6]"));
  batch.mm_token_type_ids = {0, 1, 1, 1, 1, 0};
  EXPECT_EQ(Plan("qwen2_vl_hf_v5", batch), "");
}

// GLM-Image: images_per_sample covers image_grid_thw, a row has no more sources than it counts,
// and only GLM-Image reads it.
TEST(Errors, GlmImageTargets) {
  constexpr int64_t kGlmImage = 167855;
  TestBatch batch = OneRow({16384, kGlmImage, kGlmImage, 16385, kText, 16384});
  batch.media.image_grid_thw = {{1, 1, 2}, {1, 4, 4}};
  EXPECT_THAT(Plan("glm_image", batch),
              HasSubstr("images_per_sample has 0 entries, expected one per row (1)"));
  batch.media.images_per_sample = {1};
  EXPECT_THAT(Plan("glm_image", batch),
              HasSubstr("images_per_sample sums to 1 but image_grid_thw has 2 entries"));
  batch.media.images_per_sample = {2};
  EXPECT_EQ(Plan("glm_image", batch), "");
  batch.media.image_grid_thw = {{1, 1, 2}};
  batch.media.images_per_sample = {1};
  EXPECT_EQ(Plan("glm_image", batch), "");  // no target: the decode table is its end position
  batch.media.images_per_sample = {0};
  EXPECT_THAT(Plan("glm_image", batch),
              HasSubstr("images_per_sample sums to 0 but image_grid_thw has 1 entries"));
  TestBatch qwen = OneRow({kText});
  qwen.media.images_per_sample = {0};
  EXPECT_THAT(Plan("qwen2_vl", qwen),
              HasSubstr("images_per_sample is read by GLM-Image only (its generation targets)"));
}

}  // namespace
}  // namespace mrope
