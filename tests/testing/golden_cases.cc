#include "tests/testing/golden_cases.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "mrope/common/json_reader.h"
#include "mrope/service/case_model.h"
#include "mrope/service/proto_convert.h"
#include "mrope/service/request_io.h"

namespace mrope::testing {
namespace {

constexpr char kGoldenDir[] = "tests/golden/";

std::vector<std::string> SortedEntries(const std::string& dir, bool directories) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const bool wanted = directories ? entry.is_directory() : entry.path().extension() == ".json";
    if (wanted) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::vector<std::string> GoldenPositionKeys() {
  std::vector<std::string> keys = SortedEntries(kGoldenDir, /*directories=*/true);
  keys.erase(std::remove_if(keys.begin(), keys.end(),
                            [](const std::string& key) {
                              return absl::StartsWith(key, "rotary_") ||
                                     absl::StartsWith(key, "attn_") ||
                                     absl::EndsWith(key, "_vllm_mm_features") ||
                                     absl::EndsWith(key, "_vllm_evs");
                            }),
             keys.end());
  return keys;
}

std::vector<std::string> GoldenCaseFiles(const std::string& key) {
  return SortedEntries(kGoldenDir + key, /*directories=*/false);
}

GoldenCase ReadGoldenCase(const std::string& key, const std::string& file) {
  GoldenCase out;
  out.path = kGoldenDir + key + "/" + file;
  auto text = ReadFileToString(out.path);
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) return out;
  auto doc = ParseJson(*text);
  EXPECT_TRUE(doc.ok()) << doc.status();
  if (!doc.ok()) return out;
  auto model = ModelSpecFromCase(*doc);
  auto request = PositionRequestFromJson(*text);
  EXPECT_TRUE(model.ok()) << out.path << ": " << model.status();
  EXPECT_TRUE(request.ok()) << out.path << ": " << request.status();
  if (!model.ok() || !request.ok()) return out;
  auto prompt = PromptFromProto(*request);
  EXPECT_TRUE(prompt.ok()) << out.path << ": " << prompt.status();
  if (!prompt.ok()) return out;
  out.model = *std::move(model);
  out.request = *std::move(request);
  out.prompt = *std::move(prompt);
  if (const google::protobuf::Value* outputs = FindField(*doc, "outputs")) out.outputs = *outputs;
  return out;
}

std::string StoredDeltasKey(const google::protobuf::Value& outputs) {
  for (const char* key : {"rope_deltas", "rope_deltas_thinker"}) {
    if (FindField(outputs, key) != nullptr) return key;
  }
  return "mrope_position_deltas";
}

std::vector<double> OutputValues(const google::protobuf::Value& outputs, const std::string& key,
                                 std::vector<int64_t>* shape) {
  const google::protobuf::Value* v = FindField(outputs, key);
  EXPECT_NE(v, nullptr) << key;
  if (v == nullptr) return {};
  auto values = AsFloatArray(*v, key, shape);
  auto ints = AsInt64Array(*v, key);
  EXPECT_TRUE(values.ok()) << values.status();
  if (ints.ok()) return std::vector<double>(ints->begin(), ints->end());
  return values.ok() ? std::vector<double>(values->begin(), values->end()) : std::vector<double>();
}

std::vector<double> ArrayValues(const v1::PositionArray& array) {
  if (array.int64_values_size() > 0) {
    return std::vector<double>(array.int64_values().begin(), array.int64_values().end());
  }
  if (array.int32_values_size() > 0) {
    return std::vector<double>(array.int32_values().begin(), array.int32_values().end());
  }
  return std::vector<double>(array.float_values().begin(), array.float_values().end());
}

}  // namespace mrope::testing
