// Every position case of tests/golden (HF transformers v4.57.6; vLLM for qwen2_5_vl_vllm):
// positions, deltas and decode positions must match bit for bit.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/golden_case.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;

std::vector<std::string> CaseFiles(const std::string& model) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator("tests/golden/" + model)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Compares `actual` with the JSON array `expected` (flattened); float families compare float32
// bits, integer families exact integers.
template <typename T>
void ExpectSameValues(const std::vector<T>& actual, const Value& expected,
                      const std::vector<int64_t>& expected_shape, const std::string& what) {
  std::vector<int64_t> shape;
  auto values = AsFloatArray(expected, what, &shape);
  ASSERT_TRUE(values.ok()) << values.status();
  ASSERT_EQ(shape, expected_shape) << what;
  auto ints = AsInt64Array(expected, what);
  ASSERT_EQ(values->size(), actual.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    const bool same = std::is_floating_point<T>::value
                          ? static_cast<float>(actual[i]) == (*values)[i]
                          : ints.ok() && static_cast<int64_t>(actual[i]) == (*ints)[i];
    ASSERT_TRUE(same) << what << ": first difference at flat index " << i << ": got "
                      << actual[i] << ", expected " << (*values)[i];
  }
}

template <typename Out>
void CheckCase(const BatchPlan& plan, const Value& outputs, bool omni) {
  const int64_t b = plan.batch_size;
  std::vector<Out> positions;
  ASSERT_TRUE(FillBatch(plan, positions).ok());
  ExpectSameValues(positions, *FindField(outputs, "position_ids"), {3, b, plan.seq_len},
                   "position_ids");
  std::vector<Out> deltas(plan.deltas.begin(), plan.deltas.end());
  ExpectSameValues(deltas, *FindField(outputs, "mrope_position_deltas"), {b},
                   "mrope_position_deltas");
  if (omni) {
    std::vector<Out> thinker(plan.decode_deltas.begin(), plan.decode_deltas.end());
    ExpectSameValues(thinker, *FindField(outputs, "rope_deltas_thinker"), {b},
                     "rope_deltas_thinker");
  }
  std::vector<Out> decode;
  ASSERT_TRUE(FillDecode(plan, 3, decode).ok());
  ExpectSameValues(decode, *FindField(outputs, "decode_position_ids"), {3, b, 3},
                   "decode_position_ids");
}

class GoldenPositionsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenPositionsTest, EveryCaseMatchesBitForBit) {
  const std::vector<std::string> files = CaseFiles(GetParam());
  ASSERT_GE(files.size(), 48u) << "golden cases missing for " << GetParam();
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    auto doc = ReadJsonFile(file);
    ASSERT_TRUE(doc.ok()) << doc.status();
    auto golden = PositionCaseFromJson(*doc);
    ASSERT_TRUE(golden.ok()) << golden.status();
    ASSERT_EQ(golden->model, GetParam());
    auto plan = PlanBatch(golden->config, golden->batch);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const Value* outputs = FindField(*doc, "outputs");
    ASSERT_NE(outputs, nullptr);
    const bool omni = PolicyFor(golden->config).has_audio;
    if (plan->float_positions) {
      CheckCase<float>(*plan, *outputs, omni);
    } else {
      CheckCase<int64_t>(*plan, *outputs, omni);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllModels, GoldenPositionsTest,
                         ::testing::Values("qwen2_vl", "qwen2_5_vl", "qwen2_5_vl_vllm",
                                           "qwen3_vl", "qwen2_5_omni", "qwen3_omni", "glm4v"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace mrope
