#include "mrope/rotary/cos_sin_table.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_scaling.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;

std::vector<float> DefaultInvFreq(double theta, int rotary_dim) {
  std::vector<float> inv(rotary_dim / 2);
  for (int j = 0; j < rotary_dim / 2; ++j) inv[j] = BaseInvFreq(theta, j, rotary_dim);
  return inv;
}

TEST(CosSinTableTest, TableEqualsOnTheFlyBitForBit) {
  const std::vector<float> inv = DefaultInvFreq(1e6, 128);
  const absl::StatusOr<CosSinTable> table = CosSinTable::Create(inv, 1.25f, 20000);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->num_pairs(), 64);
  EXPECT_EQ(table->max_position(), 20000);
  for (int64_t p = 0; p < 20000; ++p) {
    for (int j = 0; j < 64; ++j) {
      const CosSin want = PairCosSin(inv[j], static_cast<float>(p), 1.25f);
      const CosSin got = table->Get(p, j);
      ASSERT_EQ(got.cos, want.cos);
      ASSERT_EQ(got.sin, want.sin);
    }
  }
  EXPECT_EQ(table->cos().size(), 20000u * 64u);
}

// cos/sin of the fp32 angle against a float64 evaluation, at positions up to 2^24 - 1.
TEST(CosSinTableTest, AccurateAgainstFloat64ForEveryPositionBelow2To24) {
  const std::vector<float> inv = DefaultInvFreq(1e6, 128);
  std::mt19937 rng(3);
  std::uniform_int_distribution<int64_t> position(0, kMaxPosition - 1);
  std::vector<int64_t> positions = {0, 1, 2, 8191, 100000, kMaxPosition - 2, kMaxPosition - 1};
  for (int i = 0; i < 20000; ++i) positions.push_back(position(rng));
  double worst = 0.0;
  for (int64_t p : positions) {
    for (int j = 0; j < 64; ++j) {
      const float angle = RotaryAngle(inv[j], static_cast<float>(p));
      const CosSin cs = PairCosSin(inv[j], static_cast<float>(p), 1.0f);
      worst = std::max({worst, std::fabs(cs.cos - std::cos(double{angle})),
                        std::fabs(cs.sin - std::sin(double{angle}))});
    }
  }
  EXPECT_LE(worst, 1e-6);
  EXPECT_LE(worst, 6e-8);  // in fact a correctly rounded float32: at most half an ulp of 1
}

TEST(CosSinTableTest, LargestTableEdge) {
  const absl::StatusOr<CosSinTable> table = CosSinTable::Create({1.0f}, 1.0f, kMaxPosition);
  ASSERT_TRUE(table.ok()) << table.status();
  const float last = static_cast<float>(kMaxPosition - 1);
  EXPECT_EQ(table->Get(kMaxPosition - 1, 0).cos, static_cast<float>(std::cos(double{last})));
}

TEST(CosSinTableTest, ValidatesBeforeAllocating) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_THAT(CosSinTable::Create({}, 1.0f, 10).status().message(), HasSubstr("inv_freq must"));
  EXPECT_THAT(CosSinTable::Create(std::vector<float>(257, 1.0f), 1.0f, 10).status().message(),
              HasSubstr("inv_freq must have 1 to 256 entries"));
  EXPECT_THAT(CosSinTable::Create({1.0f, inf}, 1.0f, 10).status().message(),
              HasSubstr("inv_freq[1] must be finite"));
  EXPECT_THAT(CosSinTable::Create({1.0f}, inf, 10).status().message(),
              HasSubstr("attention_scaling must be finite"));
  EXPECT_THAT(CosSinTable::Create({1.0f}, 1.0f, 0).status().message(),
              HasSubstr("max_position must be in [1, 16777216], got 0"));
  EXPECT_THAT(CosSinTable::Create({1.0f}, 1.0f, kMaxPosition + 1).status().message(),
              HasSubstr("max_position must be in"));
  EXPECT_THAT(
      CosSinTable::Create(std::vector<float>(64, 1.0f), 1.0f, kMaxPosition).status().message(),
      HasSubstr("exceeds the limit of 134217728 entries"));
}

}  // namespace
}  // namespace mrope
