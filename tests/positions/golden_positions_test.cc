// Every position case of tests/golden (HF transformers v4.57.6, v5.2.0 and v5.15.0; vLLM for
// qwen2_5_vl_vllm) through the C++ API (PlanBatch, FillBatch, FillDecode): positions, deltas,
// stored rope_deltas and decode positions must match bit for bit.

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/model/model_family.h"
#include "mrope/common/json.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/model_config.h"
#include "tests/testing/golden_cases.h"

namespace mrope {
namespace {

using ::mrope::testing::GoldenCase;
using ::mrope::testing::GoldenCaseFiles;
using ::mrope::testing::GoldenPositionKeys;
using ::mrope::testing::OutputValues;
using ::mrope::testing::ReadGoldenCase;
using ::mrope::testing::StoredDeltasKey;

// Compares `actual` with the golden field `key` (flattened): float32 values for float families,
// exact integers otherwise (both read back exactly as double).
template <typename T>
void ExpectSameValues(const std::vector<T>& actual, const GoldenCase& c, const std::string& key,
                      const std::vector<int64_t>& expected_shape) {
  std::vector<int64_t> shape;
  const std::vector<double> expected = OutputValues(c.outputs, key, &shape);
  ASSERT_EQ(shape, expected_shape) << key;
  ASSERT_EQ(expected.size(), actual.size()) << key;
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_EQ(static_cast<double>(actual[i]), expected[i])
        << key << ": first difference at flat index " << i;
  }
}

template <typename Out>
void CheckCase(const BatchPlan& plan, const GoldenCase& c) {
  const int64_t b = plan.batch_size;
  std::vector<Out> positions;
  ASSERT_TRUE(FillBatch(plan, positions).ok());
  ExpectSameValues(positions, c, "position_ids", {3, b, plan.seq_len});
  ExpectSameValues(PerRowDeltas<Out>(plan, &RowLayout::delta), c, "mrope_position_deltas", {b});
  ExpectSameValues(PerRowDeltas<Out>(plan, &RowLayout::decode_delta), c,
                   StoredDeltasKey(c.outputs), {b});
  if (FindField(c.outputs, "decode_position_ids") == nullptr) return;  // the *_hf_v5 folders
  std::vector<Out> decode;
  ASSERT_TRUE(FillDecode(plan, 3, decode).ok());
  ExpectSameValues(decode, c, "decode_position_ids", {3, b, 3});
  // GLM-Image: every step of its decode table, rows padded to the longest.
  if (FindField(c.outputs, "decode_position_table") == nullptr) return;
  std::vector<int64_t> shape;
  OutputValues(c.outputs, "decode_position_table", &shape);
  ASSERT_EQ(shape.size(), 3u);
  ASSERT_TRUE(FillDecode(plan, shape[2], decode).ok());
  ExpectSameValues(decode, c, "decode_position_table", {3, b, shape[2]});
}

void CheckGolden(const GoldenCase& c) {
  SCOPED_TRACE(c.path);
  auto plan = PlanBatch(c.model.positions, c.prompt.batch);
  ASSERT_TRUE(plan.ok()) << plan.status();
  if (plan->float_positions) {
    CheckCase<float>(*plan, c);
  } else {
    CheckCase<int64_t>(*plan, c);
  }
}

TEST(GoldenPositionsTest, EveryModelKeyHasCases) {
  // v4.57.6 (and vLLM) folders, v5.2.0 on their inputs (*_hf_v5_2), the families new in
  // v5.2.0, and v5.15.0 (*_hf_v5).
  EXPECT_THAT(GoldenPositionKeys(),
              ::testing::ElementsAre(
                  "ernie4_5_vl_moe", "glm46v", "glm4v", "glm4v_hf_v5_2", "glm_image", "glm_ocr",
                  "paddleocr_vl", "qwen2_5_omni", "qwen2_5_omni_hf_v5_2", "qwen2_5_vl",
                  "qwen2_5_vl_hf_v5", "qwen2_5_vl_hf_v5_2", "qwen2_5_vl_vllm", "qwen2_vl",
                  "qwen2_vl_hf_v5", "qwen2_vl_hf_v5_2", "qwen3_5", "qwen3_5_moe", "qwen3_omni",
                  "qwen3_omni_hf_v5_2", "qwen3_vl", "qwen3_vl_hf_v5", "qwen3_vl_hf_v5_2"));
}

class GoldenPositionsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenPositionsTest, EveryCaseMatchesBitForBit) {
  const std::vector<std::string> files = GoldenCaseFiles(GetParam());
  ASSERT_GE(files.size(), 24u) << "golden cases missing for " << GetParam();
  for (const std::string& file : files) CheckGolden(ReadGoldenCase(GetParam(), file));
}

INSTANTIATE_TEST_SUITE_P(AllModels, GoldenPositionsTest,
                         ::testing::ValuesIn(GoldenPositionKeys()),
                         [](const auto& info) { return info.param; });

// GLM-4.5V's get_rope_index is GLM-4.1V's (tests/golden/README.md): every glm4v case, with
// GLM-4.5V's image and video ids written into the prompt, gives the same outputs.
TEST(GoldenPositionsTest, Glm4vMoeMatchesTheGlm4vCasesWithItsOwnIds) {
  const std::vector<std::string> files = GoldenCaseFiles("glm4v");
  ASSERT_GE(files.size(), 48u);
  auto moe = PresetConfig("glm4v_moe");
  ASSERT_TRUE(moe.ok()) << moe.status();
  for (const std::string& file : files) {
    GoldenCase c = ReadGoldenCase("glm4v", file);
    const SpecialTokens& glm41 = c.model.positions.tokens;
    std::vector<int64_t> ids(c.prompt.batch.input_ids.begin(), c.prompt.batch.input_ids.end());
    for (int64_t& id : ids) {
      if (id == glm41.image) {
        id = moe->tokens.image;
      } else if (id == glm41.video) {
        id = moe->tokens.video;
      }
    }
    c.prompt.batch.input_ids = ids;  // the batch views ids from here on
    c.model.positions = *moe;
    CheckGolden(c);
  }
}

}  // namespace
}  // namespace mrope
