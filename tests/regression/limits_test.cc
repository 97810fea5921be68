// PositionLimits (mrope/positions/limits.h): every limit is checked before the work it bounds
// is allocated, and every refusal names the limit and the offending value. The limits
// themselves are refused beyond the ceilings where the arithmetic they bound stays exact.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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

// B rows of L text tokens.
TestBatch TextBatch(int64_t b, int64_t l) {
  TestBatch batch;
  batch.batch_size = b;
  batch.seq_len = l;
  batch.input_ids.assign(b * l, 1000);
  return batch;
}

std::string PlanError(const TestBatch& batch, const PositionLimits& limits,
                      const char* preset = "qwen2_vl") {
  auto plan = PlanBatch(Preset(preset), batch.View(), limits);
  EXPECT_FALSE(plan.ok());
  return plan.ok() ? "" : std::string(plan.status().message());
}

std::string CreateError(const std::vector<Span>& spans, const PositionLimits& limits,
                        const char* preset = "qwen2_vl") {
  auto seq = SequencePositions::Create(Preset(preset), spans, limits);
  EXPECT_FALSE(seq.ok());
  return seq.ok() ? "" : std::string(seq.status().message());
}

TEST(LimitsTest, DefaultsServe256kTokenPrompts) {
  const PositionLimits limits;
  EXPECT_GE(limits.max_tokens_per_row, 256 * 1024);
  EXPECT_GE(limits.max_total_tokens, 8 * limits.max_tokens_per_row);
  EXPECT_GE(limits.max_position, 256 * 1024);
  // A 256k-token text prompt plans and fills under the defaults.
  auto plan = PlanBatch(Preset("qwen2_5_vl"), TextBatch(1, 256 * 1024).View());
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<int64_t> positions;
  ASSERT_TRUE(FillBatch(*plan, positions).ok());
  EXPECT_EQ(positions.back(), 256 * 1024 - 1);
}

TEST(LimitsTest, MaxTokensPerRow) {
  PositionLimits limits;
  limits.max_tokens_per_row = 8;
  EXPECT_THAT(PlanError(TextBatch(1, 9), limits),
              HasSubstr("seq_len must be in [1, max_tokens_per_row = 8], got 9"));
  EXPECT_THAT(CreateError({Span::Text(5), Span::Image({1, 2, 4})}, limits),
              HasSubstr("more than max_tokens_per_row = 8 tokens (9 after span 1)"));
}

TEST(LimitsTest, MaxBatchRows) {
  PositionLimits limits;
  limits.max_batch_rows = 2;
  EXPECT_THAT(PlanError(TextBatch(3, 1), limits),
              HasSubstr("batch_size must be in [1, max_batch_rows = 2], got 3"));
  auto plan = PlanSequences(Preset("qwen2_vl"), {{Span::Text(1)}, {Span::Text(1)},
                                                 {Span::Text(1)}}, limits);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("3 sequences exceed max_batch_rows = 2"));
}

TEST(LimitsTest, MaxTotalTokens) {
  PositionLimits limits;
  limits.max_total_tokens = 10;
  EXPECT_THAT(PlanError(TextBatch(2, 6), limits),
              HasSubstr("batch of 2 x 6 = 12 tokens exceeds max_total_tokens = 10"));
  auto seq = SequencePositions::Create(Preset("qwen2_vl"), {Span::Text(6)});
  ASSERT_TRUE(seq.ok());
  const SequencePositions pair[] = {*seq, *seq};
  auto packed = PackSequences<int64_t>(pair, limits);
  ASSERT_FALSE(packed.ok());
  EXPECT_THAT(packed.status().message(),
              HasSubstr("more than max_total_tokens = 10 tokens (12)"));
}

TEST(LimitsTest, MaxGridValueAndGridTokens) {
  PositionLimits limits;
  limits.max_grid_value = 16;
  EXPECT_THAT(CreateError({Span::Image({1, 18, 2})}, limits),
              HasSubstr("grid h must be in [1, max_grid_value = 16], got 18"));
  limits = PositionLimits();
  limits.max_grid_tokens = 3;
  EXPECT_THAT(CreateError({Span::Image({1, 4, 4})}, limits),
              HasSubstr("grid 1x4x4 makes 4 tokens, over max_grid_tokens = 3"));
  EXPECT_THAT(CreateError({Span::Audio(4)}, limits, "qwen2_5_omni"),
              HasSubstr("audio_tokens must be in [1, max_grid_tokens = 3], got 4"));
}

TEST(LimitsTest, MaxPosition) {
  PositionLimits limits;
  limits.max_position = 100;
  // Qwen2.5-VL (HF) steps a 4 s-per-grid video by 8 per frame: frame 15 is at 1 + 120.
  EXPECT_THAT(CreateError({Span::Video({16, 2, 2}, 4.0f)}, limits, "qwen2_5_vl_hf"),
              HasSubstr("largest position 122 exceeds max_position = 100"));
}

TEST(LimitsTest, MaxDecodeSteps) {
  PositionLimits limits;
  limits.max_decode_steps = 2;
  auto seq = SequencePositions::Create(Preset("qwen2_vl"), {Span::Text(4)}, limits);
  ASSERT_TRUE(seq.ok());
  std::vector<int64_t> out(3 * 3);
  const auto status = seq->Fill<int64_t>(4, 7, {out.data(), out.data() + 3, out.data() + 6});
  EXPECT_THAT(status.message(),
              HasSubstr("window end 7 is more than max_decode_steps = 2 past the prompt's 4"));

  auto plan = PlanBatch(Preset("qwen2_vl"), TextBatch(2, 4).View(), limits);
  ASSERT_TRUE(plan.ok());
  std::vector<int64_t> decode;
  EXPECT_THAT(FillDecode(*plan, 3, decode).message(),
              HasSubstr("decode steps must be in [0, max_decode_steps = 2], got 3"));
  EXPECT_TRUE(FillDecode(*plan, 2, decode).ok());
  EXPECT_EQ(decode, (std::vector<int64_t>{4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5}));
}

TEST(LimitsTest, EachLimitIsAcceptedUpToItsCeilingAndRefusedPastIt) {
  struct Field {
    int64_t PositionLimits::*limit;
    const char* name;
    int64_t min;
    int64_t ceiling;
  };
  for (const Field& field : {
           Field{&PositionLimits::max_tokens_per_row, "max_tokens_per_row", 1, kMaxTokensCeiling},
           Field{&PositionLimits::max_batch_rows, "max_batch_rows", 1, kMaxBatchRowsCeiling},
           Field{&PositionLimits::max_total_tokens, "max_total_tokens", 1, kMaxTokensCeiling},
           Field{&PositionLimits::max_grid_value, "max_grid_value", 1, kMaxGridValueCeiling},
           Field{&PositionLimits::max_grid_tokens, "max_grid_tokens", 1, kMaxTokensCeiling},
           Field{&PositionLimits::max_position, "max_position", 1, kMaxPositionCeiling},
           Field{&PositionLimits::max_decode_steps, "max_decode_steps", 0, kMaxTokensCeiling},
       }) {
    SCOPED_TRACE(field.name);
    PositionLimits limits;
    for (const int64_t ok : {field.min, field.ceiling}) {
      limits.*field.limit = ok;
      EXPECT_TRUE(ValidatePositionLimits(limits).ok()) << ok;
    }
    for (const int64_t bad : {field.min - 1, field.ceiling + 1}) {
      limits.*field.limit = bad;
      EXPECT_THAT(ValidatePositionLimits(limits).message(),
                  HasSubstr(absl::StrCat("limits: ", field.name, " must be in [", field.min, ", ",
                                         field.ceiling, "], got ", bad)));
    }
  }
  EXPECT_TRUE(ValidatePositionLimits(PositionLimits()).ok());
}

TEST(LimitsTest, PlannersAndPackingRefuseLimitsPastTheirCeilings) {
  PositionLimits limits;
  limits.max_grid_value = kMaxGridValueCeiling + 1;
  const std::string refused = absl::StrCat("limits: max_grid_value must be in [1, ",
                                           kMaxGridValueCeiling, "], got ",
                                           kMaxGridValueCeiling + 1);
  EXPECT_THAT(CreateError({Span::Text(4)}, limits), HasSubstr(refused));
  EXPECT_THAT(PlanError(TextBatch(1, 4), limits), HasSubstr(refused));
  auto plan = PlanSequences(Preset("qwen2_vl"), {{Span::Text(4)}}, limits);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr(refused));
  auto seq = SequencePositions::Create(Preset("qwen2_vl"), {Span::Text(4)});
  ASSERT_TRUE(seq.ok());
  const SequencePositions one[] = {*seq};
  auto packed = PackSequences<int64_t>(one, limits);
  ASSERT_FALSE(packed.ok());
  EXPECT_THAT(packed.status().message(), HasSubstr(refused));
}

// At the ceiling, the largest grid's token count t * (h / 2) * (w / 2) = 2^58 is exact (it was
// below 2^48 only because the default max_grid_value is 2^16).
TEST(LimitsTest, GridProductAtTheCeilingIsExact) {
  PositionLimits limits;
  limits.max_grid_value = kMaxGridValueCeiling;
  const int64_t g = kMaxGridValueCeiling;
  EXPECT_THAT(CreateError({Span::Image({g, g, g})}, limits),
              HasSubstr(absl::StrCat("grid ", g, "x", g, "x", g, " makes ", int64_t{1} << 58,
                                     " tokens, over max_grid_tokens")));
}

}  // namespace
}  // namespace mrope
