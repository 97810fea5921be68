// The explain table of golden prompts: spans, grids, ranges and where generation continues.

#include "mrope/service/explain.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/service/model_spec.h"
#include "mrope/service/position_service.h"
#include "mrope/service/proto_convert.h"
#include "tests/testing/golden_cases.h"

namespace mrope {
namespace {

using ::mrope::testing::ReadGoldenCase;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

std::string Explain(const std::string& model, const std::string& file) {
  const testing::GoldenCase c = ReadGoldenCase(model, file);
  auto service = PositionService::Create(c.model);
  EXPECT_TRUE(service.ok()) << service.status();
  auto prompt = PromptFromProto(c.request);
  EXPECT_TRUE(prompt.ok()) << prompt.status();
  auto plan = service->Plan(*prompt);
  EXPECT_TRUE(plan.ok()) << plan.status();
  auto table = ExplainPlan(c.model.positions, *plan);
  EXPECT_TRUE(table.ok()) << table.status();
  return table.ok() ? *table : "";
}

// tests/golden/README.md quirk 1: `T3 V16x2x2@2.5s T3` under HF v4 steps t by 2 * 2 = 4, the
// video ends at 64, <vision_end> at 65, text 66..68, delta +45, decode at 69.
TEST(ExplainTest, Qwen2_5VlVideoTimeSteps) {
  const std::string table = Explain("qwen2_5_vl", "case_026.json");
  EXPECT_THAT(table, HasSubstr("qwen2_5_vl under hf_v4 (video t = k * trunc(s/grid) * 2 for temporal grid k)"));
  EXPECT_THAT(table, HasSubstr("row 0: 24 tokens, max position 68, mrope_position_delta 45, "
                               "generation continues at 69"));
  EXPECT_THAT(table, ContainsRegex("1 +video +3\\.\\.20 +16x2x2 +16x1x1 +2\\.5 +4\\.\\.64 +4 +4 +66"));
  EXPECT_THAT(table, HasSubstr("t of each temporal grid: 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, "
                               "44, 48, 52, 56, 60, 64"));
  EXPECT_THAT(table, ContainsRegex("2 +text +21\\.\\.23 .* 66\\.\\.68 +66\\.\\.68 +66\\.\\.68 +69"));
}

// vLLM's scale-then-truncate on the same inputs steps by 5 (README quirk 1).
TEST(ExplainTest, VllmScaleThenTruncate) {
  const std::string table = Explain("qwen2_5_vl_vllm", "case_026.json");
  EXPECT_THAT(table, HasSubstr("video t = trunc(k * s/grid * 2)"));
  EXPECT_THAT(table, HasSubstr("t of each temporal grid: 4, 9, 14, 19, 24"));
}

// A prompt ending inside an image block: the block is open and decode continues on all axes.
TEST(ExplainTest, OpenBlockAndPadding) {
  const std::string table = Explain("qwen3_vl", "case_000.json");
  EXPECT_THAT(table, HasSubstr("image (open)"));
  const std::string padded = Explain("qwen2_vl", "case_008.json");
  EXPECT_THAT(padded, HasSubstr("3 rows of 103 columns"));
  EXPECT_THAT(padded, HasSubstr("row 0: 36 tokens + 67 padding"));
}

// Qwen3-Omni positions print as float32 values.
TEST(ExplainTest, FloatPositions) {
  const std::string table = Explain("qwen3_omni", "case_018.json");
  EXPECT_THAT(table, HasSubstr("t of each temporal grid: 12.0, 29.333334, 46.666668"));
  EXPECT_THAT(table, HasSubstr("generation continues at 52.666668"));
}

// GLM: each frame is a block at T = its start (README quirk G3 example glm4v/case_029,
// `C4 T26 Vopen2x28x8@ts0,1`: ends at (49, 62, 52), decodes at 63).
TEST(ExplainTest, GlmVideoFrames) {
  const std::string table = Explain("glm4v", "case_029.json");
  EXPECT_THAT(table, HasSubstr("glm4v under hf_v4 (each video frame is a block at t = its start; "
                               "time shows only as text between frames)"));
  EXPECT_THAT(table, ContainsRegex("1 +video frame +31\\.\\.88 +1x28x8 +1x14x4 +- +32 +"
                                   "32\\.\\.45 +32\\.\\.35 +47"));
  EXPECT_THAT(table, ContainsRegex("3 +video frame \\(open\\) +90\\.\\.146 .* 49 +49\\.\\.62 +"
                                   "49\\.\\.52 +63"));
  EXPECT_THAT(table, HasSubstr("generation continues at 63"));
}

// transformers v5.2.0 on `T4 Iopen1x24x10` (tests/golden/README.md, qwen2_vl_hf_v5_2): the
// prompt ends at (5, 16, 9), generation continues per axis, and the delta -48 is clamped.
TEST(ExplainTest, V5_2DecodesPerAxisAndClampsQwen2VlDeltas) {
  const std::string table = Explain("qwen2_vl_hf_v5_2", "case_065.json");
  EXPECT_THAT(table, HasSubstr("qwen2_vl under hf_v5_2: 1 row of 65 columns"));
  EXPECT_THAT(table, HasSubstr(
                         "mrope_position_delta 0, generation continues at (6, 17, 10) (t, h, w); "
                         "the prompt ends inside a block: hf_v4 and vllm continue at 17 on all "
                         "axes; the delta -48 is clamped at 0 (transformers v5.2.0; hf_v4 keeps "
                         "it)"));
}

// GLM-Image's decode follows its target grids (`T13 t2i1344x768->42x24+21x12`).
TEST(ExplainTest, GlmImageTargetTable) {
  const std::string table = Explain("glm_image", "case_009.json");
  EXPECT_THAT(table, HasSubstr("generation continues at the table of 2 target grid(s) from 24"));
  EXPECT_THAT(table, HasSubstr("prompt layout: <image_start> h*w image tokens <image_end> per "
                               "source image"));
}

// HunYuan-VL: the axes, each image's run and grid, and the continuation axis by axis.
TEST(ExplainTest, HunyuanImagesOnFourAxes) {
  auto service = PositionService::Create(PresetModelSpec("hunyuan_vl").value());
  ASSERT_TRUE(service.ok()) << service.status();
  const std::vector<int64_t> ids = {7, 120118, 120120, 120120, 120120, 120120, 120120,
                                    120120, 120119, 8};
  const std::vector<int64_t> types = {0, 0, 1, 1, 1, 1, 1, 1, 0, 0};
  Prompt prompt;
  prompt.batch = {1, 10, ids};
  prompt.batch.mm_token_type_ids = types;
  prompt.batch.media.image_grid_thw = {{1, 4, 2}};
  auto plan = service->Plan(prompt);
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto table = ExplainPlan(service->spec().positions, *plan);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_THAT(*table, HasSubstr("hunyuan_vl under hf_v5: 1 row of 10 columns, 4 axes"));
  EXPECT_THAT(*table, HasSubstr("(column, row, image) on axes 1, 2, 3"));
  EXPECT_THAT(*table, HasSubstr("row 0: mrope_position_delta 0, generation continues at "
                                "(10, 10, 10, 10)"));
  EXPECT_THAT(*table, HasSubstr("image 0: tokens 2..7 (begin and end keep their index), grid 2 "
                                "rows x 2 columns (separator included): columns 0..1, rows "
                                "0..1, image 0"));
}

}  // namespace
}  // namespace mrope
