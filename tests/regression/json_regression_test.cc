// Regression tests for fuzzer findings in mrope/common/json (see fuzz/FUZZING.md). The crashing
// input is kept under tests/regression/crashers/request_json_fuzzer/ and replayed by
// //fuzz:request_json_fuzzer_replay_test.

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"

namespace mrope {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// crashers/request_json_fuzzer/mixed_nesting_shape: an array mixing numbers and a deeper array
// on its last level was accepted with a shape that does not describe its values ([88, 3] for
// 90 values in the crasher; [1, 3, 1] for 3 values below).
TEST(JsonRegressionTest, ShapeDescribesEveryValue) {
  auto doc = ParseJson(R"({"a": [[1, 2, [3]]], "b": [[1, [2, 3]]], "c": [[1, 2], [3, 4]]})");
  ASSERT_TRUE(doc.ok()) << doc.status();
  std::vector<int64_t> shape;
  auto a = AsInt64Array(*FindField(*doc, "a"), "a", &shape);
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(),
              HasSubstr("a[0][2]: expected a number (the array is not rectangular), got array"));
  EXPECT_FALSE(AsFloatArray(*FindField(*doc, "b"), "b", &shape).ok());
  auto c = AsInt64Array(*FindField(*doc, "c"), "c", &shape);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(*c, ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(shape, ElementsAre(2, 2));
}

}  // namespace
}  // namespace mrope
