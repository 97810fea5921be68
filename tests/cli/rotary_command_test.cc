#include "cli/rotary_command.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/fused_reference_case.h"
#include "mrope/common/json.h"
#include "mrope/rotary/attention_case.h"
#include "tests/testing/rotary_testing.h"

namespace mrope {
namespace {

using ::mrope::testing::UlpDistance;
using ::testing::HasSubstr;

absl::StatusOr<google::protobuf::Value> RunCommand(const std::string& path) {
  std::ostringstream out;
  const absl::Status status = RunRotaryGolden(path, out);
  if (!status.ok()) return status;
  return ParseJson(out.str());
}

std::vector<float> Floats(const google::protobuf::Value& object, const std::string& key,
                          std::vector<int64_t>* shape) {
  const google::protobuf::Value* v = FindField(object, key);
  EXPECT_NE(v, nullptr) << key;
  if (v == nullptr) return {};
  absl::StatusOr<std::vector<float>> values = AsFloatArray(*v, key, shape);
  EXPECT_TRUE(values.ok()) << values.status();
  return values.ok() ? *values : std::vector<float>();
}

// Compares the command's output with the stored HF outputs: same shapes, cos/sin within 2 ulp,
// rotated q/k within 1e-5 (inputs are standard normal; ulp-level cos/sin differences can cancel).
void ExpectMatchesStoredOutputs(const std::string& case_path) {
  SCOPED_TRACE(case_path);
  const absl::StatusOr<google::protobuf::Value> got = RunCommand(case_path);
  ASSERT_TRUE(got.ok()) << got.status();
  const absl::StatusOr<google::protobuf::Value> golden = ReadJsonFile(case_path);
  ASSERT_TRUE(golden.ok()) << golden.status();
  const google::protobuf::Value* outputs = FindField(*golden, "outputs");
  ASSERT_NE(outputs, nullptr);
  for (const std::string key : {"cos", "sin", "q_rot", "k_rot"}) {
    std::vector<int64_t> got_shape, want_shape;
    const std::vector<float> g = Floats(*got, key, &got_shape);
    const std::vector<float> w = Floats(*outputs, key, &want_shape);
    ASSERT_EQ(got_shape, want_shape) << key;
    for (size_t i = 0; i < g.size(); ++i) {
      if (key == "cos" || key == "sin") {
        ASSERT_LE(UlpDistance(g[i], w[i]), 2) << key << "[" << i << "]";
      } else {
        ASSERT_NEAR(g[i], w[i], 1e-5) << key << "[" << i << "]";
      }
    }
  }
}

// Every rotary golden case: chunked and interleaved M-RoPE, every scaling method, GLM-4.1V
// (GPT-J pairs) and GLM-4.5V (NeoX halves) with half of each head rotated, and the
// transformers v5.2.0 families (rotary_*_v5: cos/sin [B][T][width] with each column on its
// axis; ERNIE's h/w-alternating axes and repeat_interleave columns), each run with its
// family's pairing and layouts.
class RotaryCommandGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RotaryCommandGoldenTest, MatchesStoredOutputs) { ExpectMatchesStoredOutputs(GetParam()); }

INSTANTIATE_TEST_SUITE_P(AllCases, RotaryCommandGoldenTest,
                         ::testing::ValuesIn(::mrope::testing::RotaryGoldenCases()),
                         ::mrope::testing::GoldenCaseName);

// On an attention-input case: q_out and k_out of the fused chain, in the inputs' shapes, equal
// to the reference's values (shortest decimals read back as the same floats).
TEST(RotaryCommandTest, AttentionInputCasesPrintTheFusedChain) {
  for (const std::string path : {"tests/golden/attn_qwen3_vl/case_001.json",
                                 "tests/golden/attn_qwen3_5/case_002.json"}) {
    SCOPED_TRACE(path);
    const absl::StatusOr<google::protobuf::Value> got = RunCommand(path);
    ASSERT_TRUE(got.ok()) << got.status();
    const absl::StatusOr<google::protobuf::Value> doc = ReadJsonFile(path);
    ASSERT_TRUE(doc.ok()) << doc.status();
    const absl::StatusOr<AttentionCase> c = ParseAttentionCase(*doc);
    ASSERT_TRUE(c.ok()) << c.status();
    const absl::StatusOr<FusedCaseOutput> want = RunFusedReference(*c);
    ASSERT_TRUE(want.ok()) << want.status();
    std::vector<int64_t> q_shape, k_shape;
    EXPECT_EQ(Floats(*got, "q_out", &q_shape), want->q_out);
    EXPECT_EQ(Floats(*got, "k_out", &k_shape), want->k_out);
    const int64_t d = c->spec.head_dim;
    EXPECT_EQ(q_shape, (std::vector<int64_t>{c->tokens, c->q_heads, d}));
    EXPECT_EQ(k_shape, (std::vector<int64_t>{c->tokens, c->k_heads, d}));
    EXPECT_EQ(FindField(*got, "q_rot"), nullptr);
  }
}

TEST(RotaryCommandTest, FindsTheGoldenCases) {
  EXPECT_GE(::mrope::testing::RotaryGoldenCases().size(), 149u);
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(RotaryCommandTest, OutputsMayBeAbsent) {
  const std::string path = WriteTemp("no_outputs.json", R"({
    "reference_model": "qwen2_vl",
    "config": {"head_dim": 4, "rope_theta": 10000.0, "mrope_section": [1, 0, 1],
               "mrope_interleaved": false, "rope_type": "default"},
    "inputs": {"position_ids": [[[0, 1]], [[0, 1]], [[0, 2]]],
               "q": [[[[1, 0, 0, 0], [1, 0, 0, 0]]]],
               "k": [[[[0, 0, 1, 0], [0, 0, 1, 0]]]]}})");
  const absl::StatusOr<google::protobuf::Value> got = RunCommand(path);
  ASSERT_TRUE(got.ok()) << got.status();
  std::vector<int64_t> shape;
  const std::vector<float> cos = Floats(*got, "cos", &shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{3, 1, 2, 4}));
  // Axis w, token 1, dimension 1 (pair 1, inv_freq 10000^(-1/2) = 0.01) at position 2.
  EXPECT_FLOAT_EQ(cos[((2 * 1 + 0) * 2 + 1) * 4 + 1], std::cos(0.02));
  const std::vector<float> q_rot = Floats(*got, "q_rot", &shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{1, 1, 2, 4}));
  // Token 1: pair 0 uses axis t (position 1): (cos 1, 0, sin 1, 0).
  EXPECT_FLOAT_EQ(q_rot[4], std::cos(1.0));
  EXPECT_FLOAT_EQ(q_rot[6], std::sin(1.0));
}

TEST(RotaryCommandTest, Errors) {
  std::ostringstream out;
  EXPECT_EQ(RunRotaryGolden("/nonexistent/case.json", out).code(), absl::StatusCode::kNotFound);
  const std::string no_config = WriteTemp("no_config.json", R"({"inputs": {}})");
  EXPECT_THAT(RunRotaryGolden(no_config, out).message(),
              HasSubstr("missing required field 'config'"));
  const std::string bad_q = WriteTemp("bad_q.json", R"({
    "reference_model": "qwen2_vl",
    "config": {"head_dim": 4, "rope_theta": 10000.0},
    "inputs": {"position_ids": [[[0]], [[0]], [[0]]], "q": [[[[1, 0]]]],
               "k": [[[[1, 0, 0, 0]]]]}})");
  EXPECT_THAT(RunRotaryGolden(bad_q, out).message(),
              HasSubstr("inputs.q: expected shape [1][heads][1][head_dim = 4], got [1, 1, 1, 2]"));
  const std::string bad_position = WriteTemp("bad_position.json", R"({
    "reference_model": "qwen2_vl",
    "config": {"head_dim": 4, "rope_theta": 10000.0},
    "inputs": {"position_ids": [[[0]], [[-1]], [[0]]], "q": [[[[1, 0, 0, 0]]]],
               "k": [[[[1, 0, 0, 0]]]]}})");
  EXPECT_THAT(RunRotaryGolden(bad_position, out).message(),
              HasSubstr("positions[1][0] = -1 is outside"));
  // The case is run with its family's layouts; a config that says otherwise is refused.
  const std::string other_pairing = WriteTemp("other_pairing.json", R"({
    "reference_model": "glm_image",
    "config": {"head_dim": 4, "rope_theta": 10000.0, "rotate": "interleaved_pairs"},
    "inputs": {"position_ids": [[[0]], [[0]], [[0]]], "q": [[[[1, 0, 0, 0]]]],
               "k": [[[[1, 0, 0, 0]]]]}})");
  EXPECT_THAT(RunRotaryGolden(other_pairing, out).message(),
              HasSubstr("config.rotate is 'interleaved_pairs', but the glm_image family's is "
                        "'half'"));
  const std::string unknown_model = WriteTemp("unknown_model.json", R"({
    "reference_model": "llama", "config": {"head_dim": 4, "rope_theta": 10000.0},
    "inputs": {"position_ids": [[[0]], [[0]], [[0]]], "q": [[[[1, 0, 0, 0]]]],
               "k": [[[[1, 0, 0, 0]]]]}})");
  EXPECT_THAT(RunRotaryGolden(unknown_model, out).message(),
              HasSubstr("reference_model 'llama' is no family's model_type"));
  EXPECT_TRUE(out.str().empty());
}

// A float32 case by hand: D 4, one q head and one k head, sections [1, 1, 0] interleaved (pair 0
// on axis t, pair 1 on axis h), inv_freq (1, 0.01).
std::string HandCase(const std::string& position_ids) {
  return absl::StrCat(R"({"kind": "attention_input", "model": "attn_test", "dtype": "float32",
    "config": {"head_dim": 4, "num_heads": 1, "num_kv_heads": 1, "rms_norm_eps": 1e-6,
               "rope_theta": 10000, "mrope_section": [1, 1, 0], "mrope_interleaved": true,
               "partial_rotary_factor": 1.0, "rotary_dim": 4, "norm_variant": "weight"},
    "inputs": {"position_ids": )",
                      position_ids, R"(, "q_pre": [[[2, 0, 0, 0]]], "k_pre": [[[0, 3, 0, 0]]],
               "q_norm_weight": [1, 1, 1, 1], "k_norm_weight": [0.5, 0.5, 0.5, 0.5]}})");
}

TEST(RotaryCommandAttentionTest, NormalizesThenRotatesEachPairOnItsAxis) {
  const absl::StatusOr<google::protobuf::Value> got =
      RunCommand(WriteTemp("attention_by_hand.json", HandCase("[[1], [5], [7]]")));
  ASSERT_TRUE(got.ok()) << got.status();
  std::vector<int64_t> shape;
  // q: rms 1, so (2, 0, 0, 0); pair (0, 2) turns by t = 1.
  const std::vector<float> q = Floats(*got, "q_out", &shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{1, 1, 4}));
  EXPECT_THAT(q, ::testing::Pointwise(::testing::FloatNear(2e-6f),
                                      {2 * std::cos(1.0f), 0.0f, 2 * std::sin(1.0f), 0.0f}));
  // k: rms 1.5, weight 0.5, so (0, 1, 0, 0); pair (1, 3) turns by 0.01 * h = 0.05.
  const std::vector<float> k = Floats(*got, "k_out", &shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{1, 1, 4}));
  EXPECT_THAT(k, ::testing::Pointwise(::testing::FloatNear(2e-6f),
                                      {0.0f, std::cos(0.05f), 0.0f, std::sin(0.05f)}));
}

TEST(RotaryCommandAttentionTest, Errors) {
  std::ostringstream out;
  EXPECT_THAT(
      RunRotaryGolden(WriteTemp("attention_bad_position.json", HandCase("[[1], [-1], [7]]")), out)
          .message(),
      HasSubstr("inputs.position_ids"));
  std::string two_tokens = HandCase("[[1, 2], [5, 6], [7, 8]]");
  EXPECT_THAT(RunRotaryGolden(WriteTemp("attention_bad_shape.json", two_tokens), out).message(),
              HasSubstr("inputs.q_pre: expected shape [2, 1, 4], got [1, 1, 4]"));
  EXPECT_TRUE(out.str().empty());
}

}  // namespace
}  // namespace mrope
