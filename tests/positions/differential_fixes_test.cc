// The two defects differential testing against HF v4.57.6 found (issue 27), each from its
// reproducer.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/positions/batch.h"
#include "tests/testing/positions_testing.h"

namespace mrope {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The t plane and delta of a one-row batch.
struct RowResult {
  std::vector<int64_t> t;
  int64_t delta = 0;
};

RowResult PlanRow(absl::string_view preset, const TestBatch& batch) {
  auto plan = PlanBatch(Preset(preset), batch.View());
  EXPECT_TRUE(plan.ok()) << plan.status();
  std::vector<int64_t> planar;
  EXPECT_TRUE(FillBatch(*plan, planar).ok());
  planar.resize(batch.seq_len);  // the t plane
  return {planar, static_cast<int64_t>(plan->layouts[0].delta)};
}

// Qwen2.5-VL: HF truncates second_per_grid_ts in the type it was given, so a float64 (or Python
// float) 0.99999999 truncates to 0, where its float32 rounding, 1.0, truncates to 1.
TEST(DifferentialFixes, SecondsPerGridTruncatedInTheGivenPrecision) {
  TestBatch batch = OneRow({151652, 151656, 151656, 151653});
  batch.media.video_grid_thw = {{2, 2, 2}};
  batch.media.second_per_grid_ts = {0.99999999};
  const RowResult as_given = PlanRow("qwen2_5_vl_hf", batch);
  EXPECT_THAT(as_given.t, ElementsAre(0, 1, 1, 2));
  EXPECT_EQ(as_given.delta, -1);

  batch.media.second_per_grid_ts = {static_cast<float>(0.99999999)};
  const RowResult float32 = PlanRow("qwen2_5_vl_hf", batch);
  EXPECT_THAT(float32.t, ElementsAre(0, 1, 3, 4));
  EXPECT_EQ(float32.delta, 1);

  // vLLM's scale-then-truncate also takes the value as given: int(1 * 0.99999999 * 2) = 1.
  batch.media.second_per_grid_ts = {0.99999999};
  EXPECT_THAT(PlanRow("qwen2_5_vl_vllm", batch).t, ElementsAre(0, 1, 2, 3));
}

// Qwen2.5-Omni: 1 or 2 mel frames make no audio token. HF raises, alone or inside a video;
// mrope refuses both the same way, naming row, token and lengths.
TEST(DifferentialFixes, AudioOfNoTokensRefusedAloneAndInVideo) {
  constexpr int64_t kAudioStart = 151647, kAudioEnd = 151648;
  for (const int64_t frames : {1, 2}) {
    TestBatch alone = OneRow({100, kAudioStart, kAudioEnd, 100});
    alone.media.audio_feature_lengths = {frames};
    auto plan = PlanBatch(Preset("qwen2_5_omni"), alone.View());
    EXPECT_THAT(plan.status().message(),
                HasSubstr(absl::StrCat("row 0, token 1: audio_feature_lengths[0] = ", frames,
                                       " mel frames make 0 audio tokens")));

    TestBatch in_video = OneRow({151652, kAudioStart, 151656, 151656, kAudioEnd, 151653});
    in_video.media.video_grid_thw = {{2, 2, 2}};
    in_video.media.audio_feature_lengths = {frames};
    in_video.media.use_audio_in_video = true;
    plan = PlanBatch(Preset("qwen2_5_omni"), in_video.View());
    EXPECT_THAT(plan.status().message(),
                HasSubstr(absl::StrCat("row 0, token 0: audio_feature_lengths[0] = ", frames,
                                       " mel frames make 0 audio tokens")));
  }
  // The span form refuses an empty audio span too.
  EXPECT_THAT(SequencePositions::Create(Preset("qwen2_5_omni"), {Span::Audio(0)})
                  .status()
                  .message(),
              HasSubstr("audio_tokens must be in [1, "));
}

}  // namespace
}  // namespace mrope
