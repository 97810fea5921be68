#include "mrope/rotary/axis_map.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/rotary/rope_math.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;

std::vector<int> Axes(const AxisMap& map) {
  return std::vector<int>(map.axis, map.axis + map.num_pairs);
}

std::vector<int> Repeat(std::vector<int> pattern, int times) {
  std::vector<int> out;
  for (int i = 0; i < times; ++i) out.insert(out.end(), pattern.begin(), pattern.end());
  return out;
}

TEST(AxisMapTest, BlockedQwen2Sections) {
  const absl::StatusOr<AxisMap> map = BlockedAxisMap({16, 24, 24}, 64);
  ASSERT_TRUE(map.ok()) << map.status();
  std::vector<int> want(16, kAxisT);
  want.insert(want.end(), 24, kAxisH);
  want.insert(want.end(), 24, kAxisW);
  EXPECT_EQ(Axes(*map), want);
}

TEST(AxisMapTest, InterleavedQwen3Sections) {
  const absl::StatusOr<AxisMap> map = InterleavedAxisMap({24, 20, 20}, 64);
  ASSERT_TRUE(map.ok()) << map.status();
  // t h w repeated for pairs 0..59, then pairs 60..63 are t.
  std::vector<int> want = Repeat({kAxisT, kAxisH, kAxisW}, 20);
  want.insert(want.end(), 4, kAxisT);
  EXPECT_EQ(Axes(*map), want);
}

TEST(AxisMapTest, InterleavedHeadDim64Sections) {
  // [12, 10, 10] over 32 pairs: h at 1, 4, ..., 28; w at 2, 5, ..., 29; t elsewhere.
  const absl::StatusOr<AxisMap> map = InterleavedAxisMap({12, 10, 10}, 32);
  ASSERT_TRUE(map.ok()) << map.status();
  std::vector<int> want = Repeat({kAxisT, kAxisH, kAxisW}, 10);
  want.insert(want.end(), 2, kAxisT);
  EXPECT_EQ(Axes(*map), want);
}

TEST(AxisMapTest, ExplicitAndTemporal) {
  const absl::StatusOr<AxisMap> map = ExplicitAxisMap({2, 0, 1, 1});
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(Axes(*map), (std::vector<int>{2, 0, 1, 1}));
  const absl::StatusOr<AxisMap> t = TemporalAxisMap(8);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(Axes(*t), std::vector<int>(8, kAxisT));
}

// ERNIE-4.5-VL: [22, 22, 20] are h, w and t counts; h and w alternate over pairs 0..43.
TEST(AxisMapTest, HwAlternatingThenT) {
  const absl::StatusOr<AxisMap> map = HwAlternatingThenTAxisMap({22, 22, 20}, 64);
  ASSERT_TRUE(map.ok()) << map.status();
  std::vector<int> want;
  for (int j = 0; j < 44; ++j) want.push_back(j % 2 == 0 ? kAxisH : kAxisW);
  want.resize(64, kAxisT);
  EXPECT_EQ(Axes(*map), want);
  const absl::StatusOr<AxisMap> named =
      MropeAxisMap(MropeLayout::kHwAlternatingThenT, {22, 22, 20}, 64);
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(Axes(*named), want);
  // An odd h + w count gives h the extra pair.
  EXPECT_EQ(Axes(*HwAlternatingThenTAxisMap({2, 1, 1}, 4)),
            (std::vector<int>{kAxisH, kAxisW, kAxisH, kAxisT}));
}

TEST(AxisMapTest, HwAlternatingThenTRejectsUnrealizableSections) {
  EXPECT_THAT(HwAlternatingThenTAxisMap({20, 24, 20}, 64).status().message(),
              HasSubstr("axis h gets 22 pairs, not 20"));
  EXPECT_THAT(HwAlternatingThenTAxisMap({22, 22, 21}, 64).status().message(),
              HasSubstr("sums to 65"));
  EXPECT_THAT(HwAlternatingThenTAxisMap({22, 22}, 44).status().message(),
              HasSubstr("3 entries [h, w, t]"));
}

// openPangu-VL's interleaving (vLLM's MRotaryEmbeddingInterleaved): the last pair is t; the
// others go one at a time to the axis with the smallest share placed/count of its count (t's
// less the last pair), the lowest axis on ties, never the previous pair's axis unless it alone
// has pairs left. [3, 3, 2] over 8 pairs, counts t 2, h 3, w 2:
//   pair 0: all 0 -> t; 1: h 0 = w 0 -> h; 2: t 1/2 > w 0 -> w; 3: t 1/2 > h 1/3 -> h;
//   4: t 1/2 = w 1/2 -> t; 5: h 2/3 > w 1/2 -> w; 6: t is spent -> h; 7: t.
TEST(AxisMapTest, PanguInterleaved) {
  const absl::StatusOr<AxisMap> map = PanguInterleavedAxisMap({3, 3, 2}, 8);
  ASSERT_TRUE(map.ok()) << map.status();
  const std::vector<int> want = {kAxisT, kAxisH, kAxisW, kAxisH, kAxisT, kAxisW, kAxisH, kAxisT};
  EXPECT_EQ(Axes(*map), want);
  const absl::StatusOr<AxisMap> named = MropeAxisMap(MropeLayout::kPanguInterleaved, {3, 3, 2}, 8);
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(Axes(*named), want);
  // One t pair: it is the last; h and w alternate before it.
  EXPECT_EQ(Axes(*PanguInterleavedAxisMap({1, 2, 2}, 5)),
            (std::vector<int>{kAxisH, kAxisW, kAxisH, kAxisW, kAxisT}));
  // Once h and w are spent, t follows t.
  EXPECT_EQ(Axes(*PanguInterleavedAxisMap({4, 1, 1}, 6)),
            (std::vector<int>{kAxisT, kAxisH, kAxisW, kAxisT, kAxisT, kAxisT}));
}

// The rule always gives t its last pair: t's entry 0 cannot be laid out (vLLM's own list then
// gives t one pair and h or w one too few).
TEST(AxisMapTest, PanguInterleavedRejectsUnrealizableSections) {
  EXPECT_THAT(PanguInterleavedAxisMap({0, 32, 32}, 64).status().message(),
              HasSubstr("pangu_interleaved mrope_section [0, 32, 32]: its t entry must be >= 1 "
                        "(the last pair is t), got 0"));
  EXPECT_THAT(PanguInterleavedAxisMap({16, 24}, 40).status().message(),
              HasSubstr("3 entries [t, h, w]"));
  EXPECT_THAT(PanguInterleavedAxisMap({16, 24, 25}, 64).status().message(),
              HasSubstr("sums to 65"));
}

TEST(AxisMapTest, SectionsMustSumToPairs) {
  const absl::Status status = BlockedAxisMap({16, 24, 20}, 64).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("sums to 60, expected rotary_dim / 2 = 64"));
  EXPECT_THAT(InterleavedAxisMap({24, 20, 21}, 64).status().message(), HasSubstr("sums to 65"));
}

TEST(AxisMapTest, RejectsBadSections) {
  EXPECT_THAT(BlockedAxisMap({16, 48}, 64).status().message(), HasSubstr("3 entries"));
  EXPECT_THAT(BlockedAxisMap({-1, 33, 32}, 64).status().message(), HasSubstr(">= 0"));
  // [4, 30, 30] over 64 pairs: h and w get only the 21 slots j % 3 == 1 and 2, t the other 22.
  EXPECT_THAT(InterleavedAxisMap({4, 30, 30}, 64).status().message(),
              HasSubstr("axis t gets 22 pairs, not 4"));
  EXPECT_FALSE(BlockedAxisMap({0, 0, 0}, 0).ok());
  EXPECT_FALSE(TemporalAxisMap(kMaxRotaryPairs + 1).ok());
}

TEST(AxisMapTest, RejectsBadExplicitAxes) {
  EXPECT_THAT(ExplicitAxisMap({0, 3}).status().message(), HasSubstr("pair 1"));
  EXPECT_FALSE(ExplicitAxisMap({}).ok());
}

TEST(AxisMapTest, Validate) {
  const AxisMap map = *BlockedAxisMap({1, 1, 1}, 3);
  EXPECT_TRUE(ValidateAxisMap(map, 3).ok());
  EXPECT_THAT(ValidateAxisMap(map, 4).message(), HasSubstr("has 3 pairs"));
  AxisMap bad = map;
  bad.axis[2] = 7;
  EXPECT_THAT(ValidateAxisMap(bad, 3).message(), HasSubstr("axis_map.axis[2]=7"));
}

}  // namespace
}  // namespace mrope
