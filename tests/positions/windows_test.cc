// Chunked prefill, decode and output forms: any window [a, b) of a planned sequence equals the
// slice of the full prompt's positions, steps past the prompt are index + delta on all axes,
// and int32/int64/packed/right-padded forms agree.

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/positions/batch.h"
#include "tests/testing/golden_cases.h"
#include "tests/testing/positions_testing.h"

namespace mrope {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Every row of every golden case: 16 random windows, some reaching past the prompt.
TEST(Windows, AnyWindowEqualsTheSliceOfTheWholePrompt) {
  std::mt19937_64 rng(20261121);
  int64_t windows = 0;
  for (const std::string& key : testing::GoldenPositionKeys()) {
    for (const std::string& file : testing::GoldenCaseFiles(key)) {
      const testing::GoldenCase golden = testing::ReadGoldenCase(key, file);
      SCOPED_TRACE(golden.path);
      auto plan = PlanBatch(golden.model.positions, golden.prompt.batch);
      ASSERT_TRUE(plan.ok()) << plan.status();
      for (const SequencePositions& seq : plan->rows) {
        const int64_t n = seq.num_tokens();
        const auto full = Window<float>(seq, 0, n + 8);
        for (int i = 0; i < 16; ++i, ++windows) {
          const int64_t a = std::uniform_int_distribution<int64_t>(0, n + 7)(rng);
          const int64_t b = std::uniform_int_distribution<int64_t>(a, n + 8)(rng);
          const auto part = Window<float>(seq, a, b);
          ASSERT_TRUE(std::equal(part.t.begin(), part.t.end(), full.t.begin() + a));
          ASSERT_TRUE(std::equal(part.h.begin(), part.h.end(), full.h.begin() + a));
          ASSERT_TRUE(std::equal(part.w.begin(), part.w.end(), full.w.begin() + a));
        }
        for (int64_t i = n; i < n + 8; ++i) {
          const float expected = static_cast<float>(i) + static_cast<float>(seq.delta());
          ASSERT_EQ(full.t[i], expected);
          ASSERT_EQ(full.h[i], expected);
          ASSERT_EQ(full.w[i], expected);
        }
      }
    }
  }
  EXPECT_GT(windows, 5000);
}

TEST(Windows, DecodeStepsAreIndexPlusDeltaOnEveryAxis) {
  // T2 + image 1x4x6 (2x3 after merge) + T2: the image (base 3) reaches column 3 + 2, its
  // <vision_end> takes 6 and the text 7, 8.
  const auto seq = Build("qwen2_vl", {Span::Text(2), Span::Image({1, 4, 6}), Span::Text(2)});
  EXPECT_EQ(seq.num_tokens(), 2 + 1 + 6 + 1 + 2);
  EXPECT_EQ(seq.max_position(), 8);
  EXPECT_EQ(seq.delta(), 9 - 12);
  const auto decode = Window(seq, 12, 15);
  EXPECT_THAT(decode.t, ElementsAre(9, 10, 11));
  EXPECT_THAT(decode.w, ElementsAre(9, 10, 11));
  const auto image = Window(seq, 3, 9);
  EXPECT_THAT(image.t, ElementsAre(3, 3, 3, 3, 3, 3));
  EXPECT_THAT(image.h, ElementsAre(3, 3, 3, 4, 4, 4));
  EXPECT_THAT(image.w, ElementsAre(3, 4, 5, 3, 4, 5));
}

TEST(Windows, Int32AndInt64Agree) {
  const auto seq = Build("qwen2_5_vl", {Span::Text(5), Span::Video({4, 6, 8}, 0.5f),
                                        Span::Text(3), Span::Image({1, 8, 8}), Span::Text(1)});
  const auto wide = Window<int64_t>(seq, 0, seq.num_tokens() + 4);
  const auto narrow = Window<int32_t>(seq, 0, seq.num_tokens() + 4);
  EXPECT_TRUE(std::equal(wide.t.begin(), wide.t.end(), narrow.t.begin()));
  EXPECT_TRUE(std::equal(wide.h.begin(), wide.h.end(), narrow.h.begin()));
  EXPECT_TRUE(std::equal(wide.w.begin(), wide.w.end(), narrow.w.begin()));
}

TEST(Windows, PackedSequencesAreBackToBackWithCuSeqlens) {
  const std::vector<SequencePositions> seqs = {
      Build("qwen2_vl", {Span::Text(3)}),
      Build("qwen2_vl", {Span::Text(1), Span::Image({1, 2, 4}), Span::Text(1)})};
  auto packed = PackSequences<int64_t>(seqs);
  ASSERT_TRUE(packed.ok()) << packed.status();
  EXPECT_THAT(packed->cu_seqlens, ElementsAre(0, 3, 9));
  ASSERT_EQ(packed->total_tokens, 9);
  const std::vector<int64_t> t(packed->positions.begin(), packed->positions.begin() + 9);
  const std::vector<int64_t> w(packed->positions.begin() + 18, packed->positions.end());
  EXPECT_THAT(t, ElementsAre(0, 1, 2, 0, 1, 2, 2, 4, 5));
  EXPECT_THAT(w, ElementsAre(0, 1, 2, 0, 1, 2, 3, 4, 5));
}

TEST(Windows, RightPaddingAndLeftPaddingGiveTheSameRealPositions) {
  constexpr int64_t kVs = 151652, kVe = 151653, kImg = 151655, kPad = 151643;
  const std::vector<int64_t> row = {7, kVs, kImg, kImg, kVe, 8};
  TestBatch left, right;
  for (TestBatch* batch : {&left, &right}) {
    batch->batch_size = 1;
    batch->seq_len = 8;
    batch->media.image_grid_thw = {{1, 2, 4}};
  }
  left.input_ids = {kPad, kPad};
  left.input_ids.insert(left.input_ids.end(), row.begin(), row.end());
  left.attention_mask = {0, 0, 1, 1, 1, 1, 1, 1};
  right.input_ids = row;
  right.input_ids.insert(right.input_ids.end(), {kPad, kPad});
  right.attention_mask = {1, 1, 1, 1, 1, 1, 0, 0};
  auto left_plan = PlanBatch(Preset("qwen2_vl"), left.View());
  auto right_plan = PlanBatch(Preset("qwen2_vl"), right.View());
  ASSERT_TRUE(left_plan.ok() && right_plan.ok());
  std::vector<int64_t> lp, rp;
  ASSERT_TRUE(FillBatch(*left_plan, lp).ok());
  ASSERT_TRUE(FillBatch(*right_plan, rp).ok());
  // Row of 8: axis t is [0, 8), h [8, 16), w [16, 24).
  EXPECT_THAT(std::vector<int64_t>(lp.begin() + 16, lp.begin() + 24),
              ElementsAre(1, 1, 0, 1, 2, 3, 4, 5));
  EXPECT_THAT(std::vector<int64_t>(rp.begin() + 16, rp.begin() + 24),
              ElementsAre(0, 1, 2, 3, 4, 5, 1, 1));
  // Same delta against the padded length either way; decode continues at max + 1.
  EXPECT_EQ(left_plan->layouts[0].delta, right_plan->layouts[0].delta);
  std::vector<int64_t> decode;
  ASSERT_TRUE(FillDecode(*right_plan, 2, decode).ok());
  EXPECT_THAT(std::vector<int64_t>(decode.begin(), decode.begin() + 2), ElementsAre(6, 7));
}

TEST(Windows, GridsAreConsumedAcrossTheBatchInOrder) {
  constexpr int64_t kVs = 151652, kVe = 151653, kImg = 151655;
  TestBatch batch;
  batch.batch_size = 2;
  batch.seq_len = 4;
  batch.input_ids = {kVs, kImg, kVe, 9,                 // row 0: first grid (1 token)
                     kVs, kImg, kImg, kVe};             // row 1: second grid (2 tokens)
  batch.media.image_grid_thw = {{1, 2, 2}, {1, 2, 4}};
  auto plan = PlanBatch(Preset("qwen2_vl"), batch.View());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->rows[0].spans()[0].span.grid.w, 2);
  EXPECT_EQ(plan->rows[1].spans()[0].span.grid.w, 4);
}

// A planner's target is replaced, not appended to: planning a second prompt into the sequence
// that held the first gives what Create gives for the second.
TEST(Windows, PlannerReplacesItsTarget) {
  auto planner = SequencePlanner::Create(Preset("qwen2_5_omni"));
  ASSERT_TRUE(planner.ok()) << planner.status();
  SequencePositions seq;
  ASSERT_TRUE(planner->Plan({Span::Text(7), Span::AudioInVideo({3, 4, 4}, 2.0f, 60)}, seq).ok());
  const std::vector<Span> second = {Span::Text(2), Span::Image({1, 4, 6}), Span::Audio(5)};
  ASSERT_TRUE(planner->Plan(second, seq).ok());
  const SequencePositions fresh = Build("qwen2_5_omni", second);
  EXPECT_EQ(seq.num_tokens(), fresh.num_tokens());
  EXPECT_EQ(seq.delta(), fresh.delta());
  EXPECT_EQ(seq.spans().size(), fresh.spans().size());
  const auto got = Window(seq, 0, seq.num_tokens() + 3);
  const auto want = Window(fresh, 0, fresh.num_tokens() + 3);
  EXPECT_EQ(got.t, want.t);
  EXPECT_EQ(got.h, want.h);
  EXPECT_EQ(got.w, want.w);
}

TEST(Windows, PlannerRefusesAnInvalidConfig) {
  ModelConfig config = Preset("qwen2_vl");
  config.spatial_merge_size = 0;
  auto planner = SequencePlanner::Create(config);
  ASSERT_FALSE(planner.ok());
  EXPECT_THAT(std::string(planner.status().message()), HasSubstr("spatial_merge_size"));
}

}  // namespace
}  // namespace mrope
