#include "mrope/common/json_reader.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mrope {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Reads {"rows": [[ints]...]} into `rows`, ints in [0, 2^62].
absl::Status ReadRows(const std::string& json, std::vector<std::vector<int64_t>>& rows) {
  return ReadJson(json, [&](JsonValue& root) {
    return root.ForEachField([&](absl::string_view key, JsonValue& value) -> absl::Status {
      if (key != "rows") return value.UnknownKey(key, {"rows"});
      return value.ForEachItem([&](int64_t, JsonValue& row) {
        rows.emplace_back();
        return ReadInt64List(row, 0, int64_t{1} << 62, 4,
                             [&](int64_t x) { rows.back().push_back(x); });
      });
    });
  });
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST(JsonReaderTest, ReadsNestedIntegers) {
  std::vector<std::vector<int64_t>> rows;
  ASSERT_TRUE(ReadRows(R"({"rows": [[1, 2.0, "3"], [151655]]})", rows).ok());
  EXPECT_THAT(rows, ElementsAre(ElementsAre(1, 2, 3), ElementsAre(151655)));
}

TEST(JsonReaderTest, NumberErrorsNameThePathAndTheValue) {
  std::vector<std::vector<int64_t>> rows;
  EXPECT_EQ(Message(ReadRows(R"({"rows": [[1], [2, -5]]})", rows)),
            "rows[1][1]: expected an integer in [0, 4611686018427387904], got -5");
  EXPECT_EQ(Message(ReadRows(R"({"rows": [[1.5]]})", rows)),
            "rows[0][0]: expected an integer in [0, 4611686018427387904], got 1.5");
  EXPECT_EQ(Message(ReadRows(R"({"rows": [[1e300]]})", rows)),
            "rows[0][0]: expected an integer in [0, 4611686018427387904], got 1e300");
  EXPECT_EQ(Message(ReadRows(R"({"rows": [[99999999999999999999999]]})", rows)),
            "rows[0][0]: expected an integer in [0, 4611686018427387904], got "
            "99999999999999999999999");
  EXPECT_EQ(Message(ReadRows(R"({"rows": [[true]]})", rows)),
            "rows[0][0]: expected an integer, got a bool");
  EXPECT_EQ(Message(ReadRows(R"({"rows": {}})", rows)), "rows: expected an array, got an object");
}

TEST(JsonReaderTest, CountsAreCheckedWhileReading) {
  std::vector<std::vector<int64_t>> rows;
  EXPECT_EQ(Message(ReadRows(R"({"rows": [[1, 2, 3, 4, 5, 6]]})", rows)),
            "rows[0]: more than 4 items");
  EXPECT_THAT(rows.back(), ElementsAre(1, 2, 3, 4));
}

TEST(JsonReaderTest, UnknownKeyListsTheAcceptedOnes) {
  std::vector<std::vector<int64_t>> rows;
  EXPECT_EQ(Message(ReadRows(R"({"rowz": []})", rows)), "unknown key 'rowz'; accepted keys: rows");
}

TEST(JsonReaderTest, DeepNestingIsRefusedQuicklyWithTheDepth) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const auto start = std::chrono::steady_clock::now();
  const absl::Status status = ReadJson(deep, [](JsonValue& root) { return root.Skip(); });
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_THAT(Message(status), HasSubstr("nest deeper than 64 levels"));
  EXPECT_THAT(Message(status), HasSubstr("[0][0][0]"));
  EXPECT_LT(elapsed, std::chrono::seconds(1));
  // Exactly 64 levels are fine.
  const std::string ok = std::string(64, '[') + std::string(64, ']');
  EXPECT_TRUE(ReadJson(ok, [](JsonValue& root) { return root.Skip(); }).ok());
}

TEST(JsonReaderTest, MalformedTextIsAnError) {
  const auto skip = [](JsonValue& root) { return root.Skip(); };
  EXPECT_THAT(Message(ReadJson(R"({"a": [1, 2)", skip)), HasSubstr("malformed JSON"));
  EXPECT_THAT(Message(ReadJson(R"({"a": 1} x)", skip)), HasSubstr("malformed JSON"));
  EXPECT_THAT(Message(ReadJson("", skip)), HasSubstr("malformed JSON"));
  EXPECT_EQ(Message(ReadJson("5", skip)), "expected a JSON object or array");
}

TEST(JsonReaderTest, ScalarsAndStrings) {
  std::string name;
  double seconds = 0;
  bool flag = false;
  const absl::Status status = ReadJson(
      R"({"name": "a\"b", "seconds": 0.5, "flag": true, "none": null})", [&](JsonValue& root) {
        return root.ForEachField([&](absl::string_view key, JsonValue& value) -> absl::Status {
          if (key == "name") {
            auto x = value.String();
            name = x.value_or("");
            return x.status();
          }
          if (key == "seconds") {
            auto x = value.Double();
            seconds = x.value_or(-1);
            return x.status();
          }
          if (key == "flag") {
            auto x = value.Bool();
            flag = x.value_or(false);
            return x.status();
          }
          auto null = value.IsNull();
          EXPECT_TRUE(null.value_or(false));
          return null.status();
        });
      });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(name, "a\"b");
  EXPECT_EQ(seconds, 0.5);
  EXPECT_TRUE(flag);
  const absl::Status infinite = ReadJson(R"({"s": 1e999})", [](JsonValue& root) {
    return root.ForEachField(
        [](absl::string_view, JsonValue& value) { return value.Double().status(); });
  });
  EXPECT_EQ(Message(infinite), "s: expected a finite number, got 1e999");
}

}  // namespace
}  // namespace mrope
