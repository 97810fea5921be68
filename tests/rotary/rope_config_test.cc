// Parsing HF-style rope configs, and one test per class of missing / invalid key.

#include "mrope/rotary/rope_config.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/rope_scaling.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<RopeParameters> Parse(const std::string& json) {
  absl::StatusOr<google::protobuf::Value> value = ParseJson(json);
  if (!value.ok()) return value.status();
  return ParseRopeParameters(*value);
}

// Parses `json`, expecting InvalidArgument with `message` in it.
void ExpectError(const std::string& json, const std::string& message) {
  const absl::StatusOr<RopeParameters> params = Parse(json);
  ASSERT_FALSE(params.ok()) << json;
  EXPECT_EQ(params.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(params.status().message(), HasSubstr(message)) << json;
}

TEST(RopeConfigTest, Qwen2VlCheckpointConfig) {
  // Qwen2-VL-7B config.json: head_dim from hidden_size / num_attention_heads, type "mrope".
  const absl::StatusOr<RopeParameters> p = Parse(R"({
    "hidden_size": 3584, "num_attention_heads": 28, "rope_theta": 1000000.0,
    "max_position_embeddings": 32768,
    "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->head_dim, 128);
  EXPECT_EQ(p->scaling.rotary_dim, 128);
  EXPECT_EQ(p->scaling.type, RopeType::kDefault);
  EXPECT_EQ(p->scaling.theta, 1e6);
  EXPECT_EQ(p->mrope_section, (std::vector<int32_t>{16, 24, 24}));
  EXPECT_EQ(p->mrope_layout, MropeLayout::kBlocked);
  EXPECT_EQ(p->attention_scaling, 1.0f);
}

TEST(RopeConfigTest, Qwen3VlTextConfig) {
  const absl::StatusOr<RopeParameters> p = Parse(R"({
    "head_dim": 128, "rope_theta": 5000000,
    "rope_scaling": {"rope_type": "default", "mrope_section": [24, 20, 20],
                     "mrope_interleaved": true}})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->mrope_layout, MropeLayout::kInterleaved);
  const absl::StatusOr<AxisMap> map = BuildAxisMap(*p);
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(map->axis[1], kAxisH);
  EXPECT_EQ(map->axis[63], kAxisT);
}

TEST(RopeConfigTest, FlattenedGoldenCaseConfig) {
  const absl::StatusOr<RopeParameters> p = Parse(R"({
    "head_dim": 64, "rope_theta": 1000000.0, "mrope_section": [8, 12, 12],
    "mrope_interleaved": false, "attention_scaling": 1.0, "rope_type": "default"})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->head_dim, 64);
  EXPECT_EQ(p->mrope_section, (std::vector<int32_t>{8, 12, 12}));
}

TEST(RopeConfigTest, TransformersV5RopeParameters) {
  const absl::StatusOr<RopeParameters> p = Parse(R"({
    "head_dim": 128, "partial_rotary_factor": 0.5,
    "rope_parameters": {"rope_type": "linear", "rope_theta": 10000, "factor": 2.0}})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->scaling.type, RopeType::kLinear);
  EXPECT_EQ(p->scaling.rotary_dim, 64);
  EXPECT_EQ(p->scaling.factor, 2.0);
  EXPECT_EQ(p->scaling.theta, 10000.0);
}

TEST(RopeConfigTest, PartialRotaryTruncatesLikeHf) {
  // int(96 * 0.34) = int(32.64) = 32.
  const absl::StatusOr<RopeParameters> p =
      Parse(R"({"head_dim": 96, "rope_theta": 10000, "partial_rotary_factor": 0.34})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->scaling.rotary_dim, 32);
}

TEST(RopeConfigTest, YarnDefaultsAndAttentionFactor) {
  const absl::StatusOr<RopeParameters> p = Parse(R"({
    "head_dim": 128, "rope_theta": 10000, "max_position_embeddings": 32768,
    "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                     "original_max_position_embeddings": 8192}})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->scaling.beta_fast, 32.0);
  EXPECT_EQ(p->scaling.beta_slow, 1.0);
  EXPECT_TRUE(p->scaling.truncate);
  EXPECT_EQ(p->scaling.original_max_position_embeddings, 8192);
  EXPECT_EQ(p->attention_scaling, static_cast<float>(0.1 * std::log(4.0) + 1.0));
}

TEST(RopeConfigTest, YarnExplicitKeys) {
  const absl::StatusOr<RopeParameters> p = Parse(R"({
    "head_dim": 64, "rope_theta": 10000, "max_position_embeddings": 4096,
    "rope_scaling": {"type": "yarn", "factor": 40, "beta_fast": 16, "beta_slow": 2,
                     "mscale": 0.707, "mscale_all_dim": 0.707, "truncate": false}})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->scaling.original_max_position_embeddings, 4096);  // max_position_embeddings
  EXPECT_EQ(p->scaling.beta_fast, 16.0);
  EXPECT_EQ(p->scaling.beta_slow, 2.0);
  EXPECT_FALSE(p->scaling.truncate);
  EXPECT_EQ(p->attention_scaling, 1.0f);
  const absl::StatusOr<RopeParameters> explicit_factor = Parse(R"({
    "head_dim": 64, "rope_theta": 10000, "max_position_embeddings": 4096,
    "rope_scaling": {"rope_type": "yarn", "factor": 40, "attention_factor": 1.25}})");
  ASSERT_TRUE(explicit_factor.ok());
  EXPECT_EQ(explicit_factor->attention_scaling, 1.25f);
}

TEST(RopeConfigTest, Llama3) {
  const absl::StatusOr<RopeParameters> p = Parse(R"({
    "head_dim": 128, "rope_theta": 500000,
    "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                     "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->scaling.type, RopeType::kLlama3);
  EXPECT_EQ(p->scaling.high_freq_factor, 4.0);
}

TEST(RopeConfigTest, LongRopeFactorFromLengthsAndAttention) {
  // Phi-3 style: no factor; s = 131072 / 4096 = 32, attention sqrt(1 + ln 32 / ln 4096).
  const absl::StatusOr<RopeParameters> p = Parse(R"({
    "head_dim": 4, "rope_theta": 10000, "max_position_embeddings": 131072,
    "original_max_position_embeddings": 4096,
    "rope_scaling": {"type": "longrope", "short_factor": [1.0, 1.5],
                     "long_factor": [2.0, 3.0]}})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->scaling.factor, 32.0);
  EXPECT_EQ(p->attention_scaling, static_cast<float>(std::sqrt(17.0 / 12.0)));
  EXPECT_EQ(p->short_factor, (std::vector<float>{1.0f, 1.5f}));
}

// HF v4.57.6's reference lengths (tests/golden/rotary_scaling_*): dynamic NTK scales against
// max_position_embeddings even when an original length is given.
TEST(RopeConfigTest, DynamicScalesAgainstMaxPositionEmbeddings) {
  const absl::StatusOr<RopeParameters> p = Parse(R"({
    "head_dim": 128, "rope_theta": 10000, "max_position_embeddings": 16384,
    "original_max_position_embeddings": 4096,
    "rope_scaling": {"rope_type": "dynamic", "factor": 2.0,
                     "original_max_position_embeddings": 4096}})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->scaling.original_max_position_embeddings, 16384);
}

// YaRN reads the original length from the rope object only, and keeps rope_scaling.factor.
TEST(RopeConfigTest, YarnIgnoresTopLevelOriginalLength) {
  const absl::StatusOr<RopeParameters> p = Parse(R"({
    "head_dim": 128, "rope_theta": 10000, "max_position_embeddings": 32768,
    "original_max_position_embeddings": 4096,
    "rope_scaling": {"rope_type": "yarn", "factor": 2.0}})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->scaling.original_max_position_embeddings, 32768);
  EXPECT_EQ(p->scaling.factor, 2.0);
}

// LongRoPE: a top-level original length sets L0 and s = max / L0, overriding rope_scaling.factor;
// an original length inside rope_scaling is not read; without a top-level one, L0 = max and
// s = rope_scaling.factor.
TEST(RopeConfigTest, LongRopeLengthsAndFactorPrecedence) {
  const absl::StatusOr<RopeParameters> top = Parse(R"({
    "head_dim": 4, "rope_theta": 10000, "max_position_embeddings": 16384,
    "original_max_position_embeddings": 4096,
    "rope_scaling": {"type": "longrope", "factor": 8.0, "short_factor": [1.0, 1.5],
                     "long_factor": [2.0, 3.0]}})");
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_EQ(top->scaling.factor, 4.0);
  EXPECT_EQ(top->scaling.original_max_position_embeddings, 4096);
  EXPECT_EQ(top->attention_scaling,
            static_cast<float>(std::sqrt(1.0 + std::log(4.0) / std::log(4096.0))));
  const absl::StatusOr<RopeParameters> nested = Parse(R"({
    "head_dim": 4, "rope_theta": 10000, "max_position_embeddings": 8192,
    "rope_scaling": {"type": "longrope", "factor": 4.0, "original_max_position_embeddings": 2048,
                     "short_factor": [1.0, 1.5], "long_factor": [2.0, 3.0]}})");
  ASSERT_TRUE(nested.ok()) << nested.status();
  EXPECT_EQ(nested->scaling.factor, 4.0);
  EXPECT_EQ(nested->scaling.original_max_position_embeddings, 8192);
  EXPECT_EQ(nested->attention_scaling,
            static_cast<float>(std::sqrt(1.0 + std::log(4.0) / std::log(8192.0))));
}

// GLM-4.1V's text config (THUDM/GLM-4.1V-9B-Thinking): head_dim 4096 / 32, half of it rotated,
// sections over the 32 rotary pairs; HF's rotate_half_llm pairs (2j, 2j+1).
TEST(RopeConfigTest, Glm4vTextConfig) {
  const absl::StatusOr<RopeParameters> p = Parse(R"({
    "model_type": "glm4v_text", "hidden_size": 4096, "num_attention_heads": 32,
    "partial_rotary_factor": 0.5, "rope_theta": 10000, "max_position_embeddings": 65536,
    "rope_scaling": {"type": "default", "mrope_section": [8, 12, 12]}})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->head_dim, 128);
  EXPECT_EQ(p->scaling.rotary_dim, 64);
  EXPECT_EQ(p->mrope_section, (std::vector<int32_t>{8, 12, 12}));
  EXPECT_EQ(p->mrope_layout, MropeLayout::kBlocked);
}

// GLM-4.5V's text config (zai-org/GLM-4.5V): head_dim given explicitly (4096 / 96 would be 42).
TEST(RopeConfigTest, Glm4vMoeTextConfig) {
  const absl::StatusOr<RopeParameters> p = Parse(R"({
    "model_type": "glm4v_moe_text", "hidden_size": 4096, "num_attention_heads": 96,
    "head_dim": 128, "partial_rotary_factor": 0.5, "rope_theta": 10000,
    "rope_scaling": {"rope_type": "default", "mrope_section": [8, 12, 12]}})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->head_dim, 128);
  EXPECT_EQ(p->scaling.rotary_dim, 64);
  EXPECT_EQ(p->mrope_section, (std::vector<int32_t>{8, 12, 12}));
}

TEST(RopeConfigErrorTest, NotAnObject) {
  ExpectError("[1, 2]", "expected a JSON object");
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4, "rope_scaling": 3})",
              "rope_scaling: expected an object");
}

TEST(RopeConfigErrorTest, MissingRequiredTopLevelKeys) {
  ExpectError(R"({"head_dim": 128})", "missing required field 'rope_theta'");
  ExpectError(R"({"rope_theta": 10000})", "missing required field 'head_dim'");
}

TEST(RopeConfigErrorTest, WrongJsonType) {
  ExpectError(R"({"head_dim": 128, "rope_theta": "big"})", "rope_theta: expected number");
  ExpectError(R"({"head_dim": 12.5, "rope_theta": 10000})", "head_dim: expected an integer");
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4,
                  "rope_scaling": {"rope_type": "linear", "factor": "2"}})",
              "rope_scaling.factor: expected number, got string");
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4, "mrope_interleaved": 1})",
              "mrope_interleaved: expected bool");
}

TEST(RopeConfigErrorTest, UnsupportedRopeType) {
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4, "rope_scaling": {"rope_type": "su"}})",
              "rope_scaling.rope_type: unsupported rope_type 'su'");
}

TEST(RopeConfigErrorTest, MissingMethodKeys) {
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4, "rope_scaling": {"type": "linear"}})",
              "rope_scaling.factor is required for rope_type 'linear'");
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4,
                  "rope_scaling": {"rope_type": "dynamic", "factor": 2}})",
              "max_position_embeddings is required for rope_type 'dynamic'");
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4,
                  "rope_scaling": {"rope_type": "llama3", "factor": 8, "high_freq_factor": 4,
                                   "original_max_position_embeddings": 8192}})",
              "rope_scaling.low_freq_factor is required for rope_type 'llama3'");
  ExpectError(R"({"head_dim": 4, "rope_theta": 1e4,
                  "rope_scaling": {"rope_type": "longrope", "short_factor": [1, 1]}})",
              "rope_scaling.long_factor is required for rope_type 'longrope'");
  ExpectError(R"({"head_dim": 4, "rope_theta": 1e4, "max_position_embeddings": 4096,
                  "rope_scaling": {"rope_type": "longrope", "short_factor": [1, 1],
                                   "long_factor": [1, 1]}})",
              "rope_scaling.factor (or a top-level original_max_position_embeddings, or an "
              "attention_factor) is required for rope_type 'longrope'");
}

TEST(RopeConfigErrorTest, InvalidValues) {
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4,
                  "rope_scaling": {"rope_type": "linear", "factor": -2}})",
              "rope_scaling.factor must be a finite number > 0, got -2");
  ExpectError(R"({"head_dim": 128, "rope_theta": 1})", "rope_theta must be a finite number > 1");
  ExpectError(R"({"head_dim": 1024, "rope_theta": 1e4})", "head_dim must be in [1, 512], got 1024");
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4, "partial_rotary_factor": 1.5})",
              "partial_rotary_factor must be in (0, 1], got 1.5");
  ExpectError(R"({"head_dim": 126, "rope_theta": 1e4, "partial_rotary_factor": 0.5})",
              "rotary_dim (int(head_dim * partial_rotary_factor)) must be even");
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4, "max_position_embeddings": 0,
                  "rope_scaling": {"rope_type": "dynamic", "factor": 2}})",
              "max_position_embeddings must be > 0, got 0");
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4, "max_position_embeddings": 4096,
                  "rope_scaling": {"rope_type": "yarn", "factor": 4, "beta_fast": 1,
                                   "beta_slow": 2}})",
              "rope_scaling.beta_fast must be finite and > beta_slow = 2, got 1");
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4, "max_position_embeddings": 4096,
                  "rope_scaling": {"rope_type": "yarn", "factor": 4, "mscale": -1}})",
              "rope_scaling.mscale must be a finite number >= 0, got -1");
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4, "max_position_embeddings": 4096,
                  "rope_scaling": {"rope_type": "yarn", "factor": 4, "attention_factor": 0}})",
              "rope_scaling.attention_factor must be a finite number > 0, got 0");
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4,
                  "rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 4,
                                   "high_freq_factor": 1,
                                   "original_max_position_embeddings": 8192}})",
              "rope_scaling.high_freq_factor must be finite and > low_freq_factor = 4, got 1");
  ExpectError(R"({"head_dim": 4, "rope_theta": 1e4, "max_position_embeddings": 8,
                  "rope_scaling": {"rope_type": "longrope", "factor": 2,
                                   "short_factor": [1, 1, 1], "long_factor": [1, 1]}})",
              "rope_scaling.short_factor must have rotary_dim / 2 = 2 entries, got 3");
  ExpectError(R"({"head_dim": 4, "rope_theta": 1e4, "max_position_embeddings": 8,
                  "rope_scaling": {"rope_type": "longrope", "factor": 2,
                                   "short_factor": [1, 1], "long_factor": [1, 0]}})",
              "rope_scaling.long_factor[1] must be a finite number > 0, got 0");
  ExpectError(R"({"head_dim": 2, "rope_theta": 1e4,
                  "rope_scaling": {"rope_type": "ntk", "factor": 2}})",
              "rotary_dim must be >= 4 for rope_type 'ntk', got 2");
}

TEST(RopeConfigErrorTest, InvalidSections) {
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4,
                  "rope_scaling": {"mrope_section": [16, 24, 20]}})",
              "mrope_section [16, 24, 20] sums to 60, expected rotary_dim / 2 = 64");
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4,
                  "rope_scaling": {"mrope_section": [16, -24, 72]}})",
              "rope_scaling.mrope_section entries must be in [0, 256], got -24");
  ExpectError(R"({"head_dim": 128, "rope_theta": 1e4,
                  "rope_scaling": {"mrope_section": [4, 30, 30], "mrope_interleaved": true}})",
              "axis t gets 22 pairs, not 4");
}

}  // namespace
}  // namespace mrope
