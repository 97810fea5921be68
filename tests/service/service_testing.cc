#include "tests/service/service_testing.h"

#include <algorithm>
#include <filesystem>

#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "mrope/positions/golden_case.h"
#include "mrope/service/request_io.h"

namespace mrope::testing {

GoldenServiceCase ReadGoldenCase(const std::string& model, const std::string& file) {
  GoldenServiceCase out;
  out.path = "tests/golden/" + model + "/" + file;
  auto text = ReadFileToString(out.path);
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) return out;
  auto doc = ParseJson(*text);
  auto parsed = PositionCaseFromJson(*doc);
  auto preset = PresetModelSpec(model);
  auto request = PositionRequestFromJson(*text);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(preset.ok()) << preset.status();
  EXPECT_TRUE(request.ok()) << request.status();
  if (!parsed.ok() || !preset.ok() || !request.ok()) return out;
  out.model = *preset;
  out.model.positions = parsed->config;
  out.request = *request;
  out.outputs = *FindField(*doc, "outputs");
  return out;
}

std::vector<std::string> GoldenCaseFiles(const std::string& model) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator("tests/golden/" + model)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
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

std::vector<double> ArrayValues(const PositionArray& array) {
  if (array.int64_values_size() > 0) {
    return std::vector<double>(array.int64_values().begin(), array.int64_values().end());
  }
  if (array.int32_values_size() > 0) {
    return std::vector<double>(array.int32_values().begin(), array.int32_values().end());
  }
  return std::vector<double>(array.float_values().begin(), array.float_values().end());
}

}  // namespace mrope::testing
