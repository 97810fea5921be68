#include "mrope/common/json.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mrope {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(JsonTest, ParsesNestedIntegerArrayWithShape) {
  auto value = ParseJson(R"({"ids": [[1, 2, 3], [4, 5, 6]]})");
  ASSERT_TRUE(value.ok()) << value.status();
  auto field = GetField(*value, "ids", "root");
  ASSERT_TRUE(field.ok());
  std::vector<int64_t> shape;
  auto ids = AsInt64Array(**field, "ids", &shape);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_THAT(*ids, ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(shape, ElementsAre(2, 3));
}

TEST(JsonTest, FloatsRoundTripToTheStoredFloat32) {
  auto value = ParseJson("[0.7, 1.3333334, 29.333334]");
  ASSERT_TRUE(value.ok());
  auto floats = AsFloatArray(*value, "x");
  ASSERT_TRUE(floats.ok());
  EXPECT_THAT(*floats, ElementsAre(0.7f, 1.3333334f, 29.333334f));
}

TEST(JsonTest, RaggedArrayIsAnErrorNamingThePath) {
  auto value = ParseJson("[[1, 2], [3]]");
  ASSERT_TRUE(value.ok());
  auto ids = AsInt64Array(*value, "input_ids");
  EXPECT_FALSE(ids.ok());
  EXPECT_THAT(ids.status().message(), HasSubstr("input_ids[1]: ragged array"));
}

TEST(JsonTest, NonIntegerIsRefused) {
  auto value = ParseJson("[1, 2.5]");
  ASSERT_TRUE(value.ok());
  auto ids = AsInt64Array(*value, "grid");
  EXPECT_FALSE(ids.ok());
  EXPECT_THAT(ids.status().message(), HasSubstr("grid[1]"));
}

TEST(JsonTest, MalformedJsonIsAnError) {
  auto value = ParseJson("{\"a\": [1, 2");
  EXPECT_FALSE(value.ok());
  EXPECT_THAT(value.status().message(), HasSubstr("malformed JSON"));
}

TEST(JsonTest, MissingFieldNamesIt) {
  auto value = ParseJson(R"({"a": 1})");
  ASSERT_TRUE(value.ok());
  auto field = GetField(*value, "b", "config");
  EXPECT_FALSE(field.ok());
  EXPECT_THAT(field.status().message(), HasSubstr("config: missing required field 'b'"));
}

}  // namespace
}  // namespace mrope
