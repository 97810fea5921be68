// mrope/rotary/attention_case.h on the attention-input golden cases (tests/golden/attn_*): the
// fields it reads and the errors it gives.

#include "mrope/rotary/attention_case.h"

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "tests/testing/rotary_testing.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;
using ::testing::HasSubstr;

// A case whose config field `key` is replaced by `value`.
Value WithConfig(Value doc, const std::string& key, const std::string& value) {
  (*(*doc.mutable_struct_value()->mutable_fields())["config"]
        .mutable_struct_value()
        ->mutable_fields())[key]
      .set_string_value(value);
  return doc;
}

TEST(AttentionCaseTest, ReadsTheNormFormEpsAndPartialRotary) {
  const absl::StatusOr<Value> doc =
      ReadJsonFile(testing::RunfilesPath("tests/golden/attn_qwen3_5/case_000.json"));
  ASSERT_TRUE(doc.ok()) << doc.status();
  const absl::StatusOr<AttentionCase> c = ParseAttentionCase(*doc);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->model, "attn_qwen3_5");
  EXPECT_EQ(c->dtype, DType::kBFloat16);
  EXPECT_EQ(c->norm, QkNormForm::kOnePlusWeight);
  EXPECT_EQ(c->eps, 1e-6f);
  EXPECT_EQ(c->spec.head_dim, 256);
  EXPECT_EQ(c->spec.rotary_dim, 64);
  EXPECT_EQ(c->spec.inv_freq.size(), 32u);
  EXPECT_EQ(c->spec.layout, RotaryLayout::kNeox);
  EXPECT_EQ(c->tokens, 1);
  EXPECT_EQ(c->q_heads, 32);
  EXPECT_EQ(c->k_heads, 2);
}

TEST(AttentionCaseTest, RejectsAnotherKindOrAnUnknownNormVariantOrDtype) {
  const absl::StatusOr<Value> doc =
      ReadJsonFile(testing::RunfilesPath("tests/golden/attn_qwen3_vl/case_000.json"));
  ASSERT_TRUE(doc.ok()) << doc.status();
  absl::StatusOr<AttentionCase> c = ParseAttentionCase(WithConfig(*doc, "norm_variant", "gemma"));
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("config.norm_variant"));
  EXPECT_THAT(c.status().message(), HasSubstr("gemma"));

  Value rotary = *doc;
  (*rotary.mutable_struct_value()->mutable_fields())["kind"].set_string_value("rotary");
  c = ParseAttentionCase(rotary);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("kind"));

  Value half = *doc;
  (*half.mutable_struct_value()->mutable_fields())["dtype"].set_string_value("float16");
  c = ParseAttentionCase(half);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("float16"));
}

TEST(AttentionCaseTest, RejectsQPreOfTheWrongShape) {
  const absl::StatusOr<Value> doc =
      ReadJsonFile(testing::RunfilesPath("tests/golden/attn_qwen3_vl/case_000.json"));
  ASSERT_TRUE(doc.ok()) << doc.status();
  Value fewer_heads = *doc;
  auto& config = *(*fewer_heads.mutable_struct_value()->mutable_fields())["config"]
                      .mutable_struct_value()
                      ->mutable_fields();
  config["num_heads"].set_number_value(config["num_heads"].number_value() + 1);
  const absl::StatusOr<AttentionCase> c = ParseAttentionCase(fewer_heads);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("inputs.q_pre"));
}

}  // namespace
}  // namespace mrope
