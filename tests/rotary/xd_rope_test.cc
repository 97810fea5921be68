// XD-RoPE (MropeLayout::kXd, HunYuan-VL): the per-element axis map over any number of sections,
// the CPU rotation and cos/sin with a pair's halves on different axes. transformers' own module
// is the reference in python/tests/test_reference_rotary.py; these check the layout rule on
// hand-laid examples and that equal axes reduce to 1-D RoPE bit for bit.

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/rotary/apply.h"
#include "mrope/rotary/axis_map.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;

std::vector<int> Axes(const AxisMap& map, bool second) {
  std::vector<int> out;
  for (int j = 0; j < map.num_pairs; ++j) out.push_back(second ? map.second_axis[j] : map.axis[j]);
  return out;
}

// HunyuanOCR's [16, 16, 16, 16] over 64 pairs: element blocks of 32, so pairs 0..31 rotate
// their first element by axis 0 and their second by axis 2, pairs 32..63 by axes 1 and 3.
TEST(XdRope, CheckpointSections) {
  auto map = XdAxisMap({16, 16, 16, 16}, 64);
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_TRUE(map->split_halves);
  std::vector<int> first(32, 0), second(32, 2);
  first.insert(first.end(), 32, 1);
  second.insert(second.end(), 32, 3);
  EXPECT_EQ(Axes(*map, false), first);
  EXPECT_EQ(Axes(*map, true), second);
  EXPECT_EQ(AxisCount(*map), 4);
}

// Unequal sections [5, 3, 4, 4] over 16 pairs: elements 0-9 axis 0, 10-15 axis 1, 16-23 axis 2,
// 24-31 axis 3.
TEST(XdRope, UnequalSectionsAndOtherCounts) {
  auto map = XdAxisMap({5, 3, 4, 4}, 16);
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(Axes(*map, false),
            (std::vector<int>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(Axes(*map, true),
            (std::vector<int>{2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3}));
  // Three axes over 6 pairs: element blocks 0-3, 4-7, 8-11.
  auto three = XdAxisMap({2, 2, 2}, 6);
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(Axes(*three, false), (std::vector<int>{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(Axes(*three, true), (std::vector<int>{1, 1, 2, 2, 2, 2}));
  EXPECT_THAT(std::string(XdAxisMap({4, 4, 4, 5}, 16).status().message()),
              HasSubstr("sums to 17, expected rotary_dim / 2 = 16"));
  EXPECT_THAT(std::string(XdAxisMap({2, 2, 2, 2, 2, 2, 2, 1, 1}, 16).status().message()),
              HasSubstr("must have 1 to 8 entries"));
  EXPECT_THAT(std::string(XdAxisMap({8, -1, 5, 4}, 16).status().message()),
              HasSubstr("entries must be >= 0"));
}

RotarySpec XdSpec(std::vector<int32_t> sections, int head_dim) {
  RopeParameters params;
  params.head_dim = head_dim;
  params.scaling.rotary_dim = head_dim;
  params.scaling.theta = 1e4;
  params.mrope_section = std::move(sections);
  params.mrope_layout = MropeLayout::kXd;
  auto spec = BuildRotarySpec(params, RotaryLayout::kNeox, 1);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

HeadsView View(std::vector<float>& data, int64_t tokens, int head_dim) {
  HeadsView v;
  v.data = data.data();
  v.num_tokens = tokens;
  v.num_heads = 1;
  v.head_dim = head_dim;
  v.token_stride = head_dim;
  v.head_stride = head_dim;
  return v;
}

std::vector<float> Input(int64_t tokens, int head_dim) {
  std::vector<float> x(tokens * head_dim);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.01f * static_cast<float>(i % 97) - 0.4f;
  return x;
}

// Each element takes its own axis's angle: y1 = x1 c_a - x2 s_a, y2 = x2 c_b + x1 s_b.
TEST(XdRope, RotationTakesEachElementsAxis) {
  const int d = 32;
  const RotarySpec spec = XdSpec({5, 3, 4, 4}, d);
  const std::vector<int64_t> positions = {7, 300, 12, 5000};  // [4][1]: one token
  PositionsView view{positions.data(), true, 1, 1};
  std::vector<float> q = Input(1, d), k = Input(1, d);
  const std::vector<float> x = q;
  ASSERT_TRUE(ApplyMropeReference(spec, view, View(q, 1, d), View(k, 1, d)).ok());
  for (int j = 0; j < d / 2; ++j) {
    const CosSin a = PairCosSin(spec.inv_freq[j], positions[spec.axis_map.axis[j]], 1.0f);
    const CosSin b = PairCosSin(spec.inv_freq[j], positions[spec.axis_map.second_axis[j]], 1.0f);
    EXPECT_EQ(q[j], RotatedFirst(x[j], x[j + d / 2], a)) << j;
    EXPECT_EQ(q[j + d / 2], RotatedSecond(x[j], x[j + d / 2], b)) << j;
  }
  auto elements = ComputeElementCosSin(spec, view);
  ASSERT_TRUE(elements.ok()) << elements.status();
  for (int e = 0; e < d; ++e) {
    const int axis = e < d / 2 ? spec.axis_map.axis[e] : spec.axis_map.second_axis[e - d / 2];
    const CosSin want = PairCosSin(spec.inv_freq[e % (d / 2)], positions[axis], 1.0f);
    EXPECT_EQ((*elements)[e].cos, want.cos) << e;
    EXPECT_EQ((*elements)[e].sin, want.sin) << e;
  }
  EXPECT_THAT(std::string(ComputeCosSin(spec, view).status().message()), HasSubstr("XD-RoPE"));
}

// Text tokens carry one position on every axis: XD-RoPE is then 1-D RoPE, bit for bit.
TEST(XdRope, EqualAxesAreOneDimensionalRope) {
  const int d = 64;
  const RotarySpec xd = XdSpec({16, 8, 4, 4}, d);
  RotarySpec plain = xd;
  plain.axis_map = TemporalAxisMap(d / 2).value();
  const std::vector<int64_t> row = {0, 1, 2, 1000, 77777};
  std::vector<int64_t> planar;
  for (int a = 0; a < 4; ++a) planar.insert(planar.end(), row.begin(), row.end());
  std::vector<float> q1 = Input(5, d), k1 = Input(5, d), q2 = q1, k2 = k1;
  ASSERT_TRUE(ApplyMropeReference(xd, {planar.data(), true, 5, 5}, View(q1, 5, d), View(k1, 5, d))
                  .ok());
  ASSERT_TRUE(ApplyMropeReference(plain, {planar.data(), true, 5, 5}, View(q2, 5, d),
                                  View(k2, 5, d))
                  .ok());
  EXPECT_EQ(0, std::memcmp(q1.data(), q2.data(), q1.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(k1.data(), k2.data(), k1.size() * sizeof(float)));
}

// The positions view must hold every axis the map reads: four here.
TEST(XdRope, PositionsOfEveryAxisAreChecked) {
  const RotarySpec spec = XdSpec({4, 4, 4, 4}, 32);
  std::vector<int64_t> planar = {1, 2, 3, -4};
  std::vector<float> q = Input(1, 32), k = Input(1, 32);
  EXPECT_THAT(std::string(ApplyMropeReference(spec, {planar.data(), true, 1, 1}, View(q, 1, 32),
                                              View(k, 1, 32))
                              .message()),
              HasSubstr("positions[3][0] = -4"));
}

}  // namespace
}  // namespace mrope
