// Regression tests for fuzzer findings in mrope/positions (see fuzz/FUZZING.md). Each test
// names the crasher input kept under tests/regression/crashers/positions_fuzzer/, which the
// replay test //fuzz:positions_fuzzer_replay_test also runs through the fuzz target.

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/limits.h"
#include "mrope/positions/model_config.h"
#include "mrope/positions/sequence_positions.h"
#include "mrope/positions/span.h"
#include "tests/testing/positions_testing.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;

// crashers/positions_fuzzer/image_span_with_audio_tokens: an image span carrying audio_tokens
// = 4 was planned with 4 extra tokens, written from past the end of its grid (position 755 for
// a max_position of 743).
TEST(PositionsRegressionTest, MediaSpanWithAudioTokensIsRefused) {
  Span image = Span::Image({58, 20, 2});
  image.audio_tokens = 4;
  auto seq = SequencePositions::Create(Preset("qwen3_omni"), {image});
  ASSERT_FALSE(seq.ok());
  EXPECT_EQ(seq.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(seq.status().message(),
              HasSubstr("span 0 (image): audio_tokens must be 0 for an image span, got 4"));

  Span video = Span::Video({2, 4, 4}, 1.0f);
  video.audio_tokens = 1;
  EXPECT_FALSE(SequencePositions::Create(Preset("qwen2_vl"), {video}).ok());

  // The same image without them plans 1 + 580 + 1 tokens, the last at max_position 743.
  auto plain = SequencePositions::Create(Preset("qwen3_omni"), {Span::Image({58, 20, 2})});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->num_tokens(), 582);
  EXPECT_EQ(plain->max_position(), 743);
}

// crashers/positions_fuzzer/grid_tokens_int64_overflow: a grid value of ~2^61 from the request
// overflowed int64 in the scanner's token count t * (h / m) * (w / m) (UBSan: signed integer
// overflow) before any limit was looked at.
TEST(PositionsRegressionTest, HugeGridValuesAreRefusedBeforeScanning) {
  const ModelConfig config = Preset("qwen2_vl");
  TestBatch batch;
  batch.batch_size = 1;
  batch.input_ids = {config.tokens.vision_start, config.tokens.image, config.tokens.vision_end};
  batch.seq_len = batch.input_ids.size();
  batch.media.image_grid_thw = {{2062085679382265834, 38, 2}};
  auto plan = PlanBatch(config, batch.View());
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(),
              HasSubstr("image_grid_thw[0] = [2062085679382265834, 38, 2]: 2062085679382265834 "
                        "exceeds max_grid_value = 65536"));

  // The check follows the caller's limits, for videos too.
  PositionLimits limits;
  limits.max_grid_value = 8;
  batch.input_ids = {config.tokens.vision_start, config.tokens.video, config.tokens.vision_end};
  batch.media.image_grid_thw.clear();
  batch.media.video_grid_thw = {{1, 2, 10}};
  plan = PlanBatch(config, batch.View(), limits);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(),
              HasSubstr("video_grid_thw[0] = [1, 2, 10]: 10 exceeds max_grid_value = 8"));
}

// crashers/positions_fuzzer/unread_seconds_list_overread: Qwen2-VL and Qwen3-VL do not read
// seconds per grid, so their lists went unchecked, yet the scanner indexed video_second_per_grid
// by video: one entry for two videos read past the vector (ASan: heap-buffer-overflow). The
// lists are now ignored for those families, as HF ignores them.
TEST(PositionsRegressionTest, SecondsListsAreIgnoredWhereTheFamilyHasNoTimeScale) {
  for (const char* preset : {"qwen2_vl", "qwen3_vl"}) {
    SCOPED_TRACE(preset);
    const ModelConfig config = Preset(preset);
    const SpecialTokens& t = config.tokens;
    TestBatch batch;
    batch.batch_size = 1;
    batch.input_ids = {t.vision_start, t.video, t.vision_end, t.vision_start, t.video,
                       t.vision_end};
    batch.seq_len = batch.input_ids.size();
    batch.media.video_grid_thw = {{1, 2, 2}, {1, 2, 2}};
    auto expected = PlanBatch(config, batch.View());
    ASSERT_TRUE(expected.ok()) << expected.status();
    std::vector<int64_t> want;
    ASSERT_TRUE(FillBatch(*expected, want).ok());

    batch.media.video_second_per_grid = {0.5f};
    auto plan = PlanBatch(config, batch.View());
    ASSERT_TRUE(plan.ok()) << plan.status();
    std::vector<int64_t> got;
    ASSERT_TRUE(FillBatch(*plan, got).ok());
    EXPECT_EQ(got, want);
    EXPECT_EQ(want, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}));
  }
}

// crashers/positions_fuzzer/omni_time_index_float_cast_overflow: a Qwen2.5-Omni video with
// 4.2e21 seconds per grid has time index ~1.3e24 at k = 12; converting that float to int64 (HF's
// truncation) was undefined behaviour (UBSan: float-cast-overflow). The position is now refused
// by max_position.
TEST(PositionsRegressionTest, HugeSecondsPerGridIsRefusedByMaxPosition) {
  for (const char* preset : {"qwen2_5_omni", "qwen3_omni"}) {
    SCOPED_TRACE(preset);
    auto seq = SequencePositions::Create(Preset(preset), {Span::Video({13, 2, 2}, 4.2e21f)});
    ASSERT_FALSE(seq.ok());
    EXPECT_THAT(seq.status().message(), HasSubstr("exceeds max_position = 2147483647"));
  }
  // The same video at 2 s per grid: k * 2 * 25 (Qwen2.5-Omni).
  auto seq = SequencePositions::Create(Preset("qwen2_5_omni"), {Span::Video({13, 2, 2}, 2.0f)});
  ASSERT_TRUE(seq.ok()) << seq.status();
  EXPECT_EQ(seq->max_position(), 1 + 12 * 50 + 1);
}

// Found reviewing the above: position_id_per_seconds = 1e300 (a finite double) is inf in
// float32, so frame 0's time index 0 * inf was NaN; NaN compares below max_position, and
// Qwen3-Omni planned max_position 0, delta -2 and wrote NaN positions. Scales are now bounded
// by kMaxTimeScale.
TEST(PositionsRegressionTest, TimeScalesAreBounded) {
  ModelConfig config = Preset("qwen2_5_omni");
  config.position_id_per_seconds = 1e300;
  auto seq = SequencePositions::Create(config, {Span::Video({1, 2, 2}, 1.0f)});
  ASSERT_FALSE(seq.ok());
  EXPECT_THAT(seq.status().message(),
              HasSubstr("position_id_per_seconds must be in (0, 1e+06], got 1e+300"));
  config = Preset("qwen2_5_vl");
  config.tokens_per_second = std::numeric_limits<double>::infinity();
  EXPECT_THAT(ValidateModelConfig(config).message(),
              HasSubstr("tokens_per_second must be in (0, 1e+06], got inf"));
}

// Found in the limits audit: FillDecode checked steps against the default limits, not the
// caller's, and allocated 3 * B * steps positions with B * steps unbounded: one service request
// with 4096 one-token rows and decode_steps = 2^24 asked for 1.6 TB.
TEST(PositionsRegressionTest, DecodeOutputIsBoundedBeforeAllocating) {
  TestBatch batch;
  batch.batch_size = 4096;
  batch.seq_len = 1;
  batch.input_ids.assign(4096, 1000);
  auto plan = PlanBatch(Preset("qwen2_vl"), batch.View());
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<int64_t> decode;
  const absl::Status status = FillDecode(*plan, int64_t{1} << 24, decode);
  EXPECT_THAT(status.message(), HasSubstr("decode positions of 4096 rows x 16777216 steps "
                                          "exceed max_total_tokens = 67108864"));
  EXPECT_TRUE(decode.empty());
  // The plan's own limits apply: 4096 rows x 16 steps fits 65536 but not 65535.
  PositionLimits limits;
  limits.max_total_tokens = 65535;
  plan = PlanBatch(Preset("qwen2_vl"), batch.View(), limits);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(FillDecode(*plan, 16, decode).ok());
  plan->limits.max_total_tokens = 65536;
  ASSERT_TRUE(FillDecode(*plan, 16, decode).ok());
  EXPECT_EQ(decode.size(), 3u * 4096 * 16);
  EXPECT_EQ(decode[15], 16);  // row 0, step 15: max 0 + 1 + 15
}

}  // namespace
}  // namespace mrope
