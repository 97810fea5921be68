#include "mrope/common/json_writer.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mrope/common/json.h"

namespace mrope {
namespace {

TEST(JsonWriterTest, FloatsAreShortestRoundTrip) {
  std::string out;
  AppendJsonNumber(29.333334f, out);
  EXPECT_EQ(out, "29.333334");
  out.clear();
  AppendJsonNumber(12.0f, out);
  EXPECT_EQ(out, "12.0");
  out.clear();
  AppendJsonNumber(-39.333332f, out);
  EXPECT_EQ(out, "-39.333332");
}

TEST(JsonWriterTest, NestedArrayReadsBackWithItsShape) {
  const std::vector<int64_t> values = {1, 2, 3, 4, 5, 6};
  const std::vector<int64_t> shape = {3, 1, 2};
  std::string out;
  AppendJsonArray<int64_t>(values, shape, out);
  EXPECT_EQ(out, "[[[1,2]],[[3,4]],[[5,6]]]");
  auto parsed = ParseJson(out);
  ASSERT_TRUE(parsed.ok());
  std::vector<int64_t> read_shape;
  auto read = AsInt64Array(*parsed, "x", &read_shape);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, values);
  EXPECT_EQ(read_shape, shape);
}

TEST(JsonWriterTest, EveryFloat32InASweepRoundTrips) {
  // 0.1 steps over a wide range: the printed text must parse back to the same float bits.
  for (float x = -1000.0f; x < 1000.0f; x += 0.37f) {
    std::string out;
    AppendJsonNumber(x, out);
    auto parsed = ParseJson("[" + out + "]");  // a document is an array or an object
    ASSERT_TRUE(parsed.ok()) << out;
    EXPECT_EQ(static_cast<float>(parsed->list_value().values(0).number_value()), x) << out;
  }
}

}  // namespace
}  // namespace mrope
