#include "mrope/common/json_reader.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

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

// rapidjson hands integers past uint64 over as doubles, and refuses numbers past DBL_MAX: both
// must come out as clear refusals naming the value.
TEST(JsonReaderTest, HugeNumbersAreRefusedWithTheirText) {
  const auto read_int = [](const std::string& json) {
    return Message(ReadJson(json, [](JsonValue& root) {
      return root.ForEachItem([](int64_t, JsonValue& x) { return x.Int64().status(); });
    }));
  };
  EXPECT_EQ(read_int("[9223372036854775807, -9223372036854775808]"), "");
  EXPECT_EQ(read_int("[9223372036854775808]"),
            "[0]: expected an integer in [-9223372036854775808, 9223372036854775807], got "
            "9223372036854775808");
  EXPECT_EQ(read_int("[-9223372036854775809]"),
            "[0]: expected an integer in [-9223372036854775808, 9223372036854775807], got "
            "-9223372036854775809");
  EXPECT_EQ(read_int("[9007199254740991.0, -9007199254740991.0, 1e15, 2.50e1, 120e-1, 0.0e9]"),
            "");
  // From 2^53 on, a double may stand for its neighbour: 9007199254740993.0 reads as 2^53.
  for (const std::string number : {"9007199254740992.0", "9007199254740993.0", "1e16"}) {
    EXPECT_EQ(read_int("[" + number + "]"),
              "[0]: expected an integer in [-9223372036854775808, 9223372036854775807], got " +
                  number);
  }
  // Fractions that round to an integral double are still fractions.
  for (const std::string number :
       {"1.00000000000000000001", "4503599627370496.5", "125e-1", "1e-400"}) {
    EXPECT_EQ(read_int("[" + number + "]"),
              "[0]: expected an integer in [-9223372036854775808, 9223372036854775807], got " +
                  number);
  }
  EXPECT_EQ(read_int("[1e400]"),
            "[0]: expected an integer in [-9223372036854775808, 9223372036854775807], got 1e400");
  EXPECT_EQ(read_int("[" + std::string(400, '9') + "]"),
            "[0]: expected an integer in [-9223372036854775808, 9223372036854775807], got " +
                std::string(40, '9') + "...");
  const auto read_double = [](const std::string& json) {
    double out = 0;
    const absl::Status status = ReadJson(json, [&](JsonValue& root) {
      return root.ForEachItem([&](int64_t, JsonValue& x) {
        absl::StatusOr<double> d = x.Double();
        out = d.value_or(0);
        return d.status();
      });
    });
    return status.ok() ? absl::StrCat(out) : Message(status);
  };
  EXPECT_EQ(read_double("[-1e400]"), "[0]: expected a finite number, got -1e400");
  EXPECT_EQ(read_double("[18446744073709551616]"), "1.84467e+19");
  EXPECT_EQ(read_double("[0.6666666865348816]"), absl::StrCat(0.6666666865348816));
  EXPECT_EQ(read_double("[1e-400]"), "0");
  EXPECT_EQ(read_double("[-0.000e30]"), "-0");
  // config_json_fuzzer: each of these was undefined behaviour in rapidjson 1.1.0's
  // full-precision conversion (__builtin_clzll(0); its power-of-ten table read out of bounds).
  // Kept in tests/regression/crashers/config_json_fuzzer/ as zero_mantissa_full_precision,
  // full_precision_power_table_overflow and full_precision_power_table_underflow.
  EXPECT_EQ(read_double("[0e99]"), "0");
  EXPECT_EQ(read_double("[" + std::string(300, '9') + "e99]"),
            "[0]: expected a finite number, got " + std::string(40, '9') + "...");
  EXPECT_EQ(read_double("[0." + std::string(400, '0') + "1e-10]"), "0");
}

// Doubles are the nearest double to their text (what Python's json gives HF's floats), however
// many digits the text has.
TEST(JsonReaderTest, DoublesAreCorrectlyRounded) {
  const auto read_double = [](const std::string& json) {
    double out = 0;
    const absl::Status status = ReadJson(json, [&](JsonValue& root) {
      return root.ForEachItem([&](int64_t, JsonValue& x) {
        absl::StatusOr<double> d = x.Double();
        out = d.value_or(-1);
        return d.status();
      });
    });
    EXPECT_TRUE(status.ok()) << status;
    return out;
  };
  EXPECT_EQ(read_double("[2.2250738585072011e-308]"), 2.2250738585072011e-308);
  EXPECT_EQ(read_double("[4.9406564584124654e-324]"), 4.9406564584124654e-324);
  EXPECT_EQ(read_double("[1.7976931348623157e308]"), 1.7976931348623157e308);
  EXPECT_EQ(read_double("[0.1]"), 0.1);
  EXPECT_EQ(read_double("[1." + std::string(500, '0') + "1]"), 1.0);
  // Exactly halfway between 1 and the next double, then just above it.
  EXPECT_EQ(read_double("[1.00000000000000011102230246251565404236316680908203125]"), 1.0);
  EXPECT_EQ(read_double("[1.00000000000000011102230246251565404236316680908203126]"),
            1.0000000000000002);
}

TEST(JsonReaderTest, TruncatedAndTrailingTextIsRefused) {
  const auto skip = [](JsonValue& root) { return root.Skip(); };
  const auto read_rows = [](const std::string& json) {
    std::vector<std::vector<int64_t>> rows;
    return Message(ReadRows(json, rows));
  };
  EXPECT_EQ(read_rows(R"({"rows": [[1, 2)"), "rows[0]: malformed JSON at byte 15: the text ends inside an array");
  EXPECT_EQ(read_rows(R"({"rows": [[1, 2]])"), "malformed JSON at byte 17: the text ends inside an object");
  EXPECT_EQ(read_rows(R"({"rows": [[1 2]]})"),
            "rows[0]: malformed JSON at byte 13: expected ',' or ']' after an array's item");
  EXPECT_EQ(read_rows(R"({"rows": [[1,]]})"),
            "rows[0][1]: malformed JSON at byte 13: expected a value, got ']'");
  EXPECT_EQ(read_rows(R"({"rows" [[1]]})"), "malformed JSON at byte 8: expected ':' after a key");
  EXPECT_EQ(read_rows(R"({"rows": []} [])"), "malformed JSON at byte 13: text after the top-level value");
  // Skipped values are parsed in full.
  EXPECT_THAT(Message(ReadJson(R"({"a": [1, {"b": tru}]})", skip)),
              HasSubstr("a[1].b: malformed JSON at byte"));
  EXPECT_THAT(Message(ReadJson(R"({"a": [1, 2)", skip)),
              HasSubstr("a[2]: malformed JSON at byte 11: Missing a comma or ']'"));
  EXPECT_EQ(Message(ReadJson(std::string("{\"a\": 1}\0", 9), skip)),
            "malformed JSON: a NUL byte at byte 8");
}

TEST(JsonReaderTest, StringsMustBeValidUtf8WithoutControlCharacters) {
  const auto read_string = [](const std::string& json) {
    std::string out;
    const absl::Status status = ReadJson(json, [&](JsonValue& root) {
      return root.ForEachItem([&](int64_t, JsonValue& x) {
        absl::StatusOr<std::string> s = x.String();
        out = s.value_or("");
        return s.status();
      });
    });
    return status.ok() ? out : Message(status);
  };
  EXPECT_EQ(read_string(R"(["a\u00e9\ud83d\ude00"])"), "a\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_THAT(read_string("[\"a\xff\"]"), HasSubstr("[0]: malformed JSON at byte 3: Invalid encoding"));
  EXPECT_THAT(read_string("[\"a\tb\"]"), HasSubstr("[0]: malformed JSON at byte 3"));
  EXPECT_THAT(read_string(R"(["\ud83d"])"), HasSubstr("[0]: malformed JSON at byte 2"));
  // In a skipped value too.
  EXPECT_THAT(Message(ReadJson("{\"a\": [\"\xc3\"]}", [](JsonValue& r) { return r.Skip(); })),
              HasSubstr("a[0]: malformed JSON at byte 8: Invalid encoding"));
}

TEST(JsonReaderTest, DeepNestingUnderASkippedKeyNamesThePath) {
  const std::string deep = "{\"a\": [1, {\"b\": " + std::string(100, '[') + std::string(100, ']') + "}]}";
  const absl::Status status = ReadJson(deep, [](JsonValue& root) {
    return root.ForEachField([](absl::string_view, JsonValue&) { return absl::OkStatus(); });
  });
  EXPECT_EQ(Message(status), "a[1].b" + [] {
    std::string path;
    for (int i = 0; i < 61; ++i) path += "[0]";
    return path;
  }() + ": arrays and objects nest deeper than 64 levels");
}

TEST(JsonReaderTest, AValueIsReadOnce) {
  const absl::Status status = ReadJson("[1]", [](JsonValue& root) {
    return root.ForEachItem([](int64_t, JsonValue& x) {
      EXPECT_TRUE(x.Int64().ok());
      return x.Int64().status();
    });
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace mrope
