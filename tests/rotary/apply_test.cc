// The CPU reference apply: properties RoPE must have (relative positions, 1-D reduction, norm
// preservation, layout equivalence), storage formats, strided views and validation.

#include "mrope/rotary/apply.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/rotary/cos_sin_table.h"
#include "mrope/rotary/half_float.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;

RotarySpec MakeSpec(std::vector<int32_t> sections, bool interleaved = false, int head_dim = 128,
                    int rotary_dim = 128, RotaryLayout layout = RotaryLayout::kNeox) {
  RopeParameters p;
  p.head_dim = head_dim;
  p.scaling.rotary_dim = rotary_dim;
  p.scaling.theta = 10000.0;
  p.mrope_section = std::move(sections);
  p.mrope_layout = interleaved ? MropeLayout::kInterleaved : MropeLayout::kBlocked;
  absl::StatusOr<RotarySpec> spec = BuildRotarySpec(p, layout, 0);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

std::vector<float> RandomNormal(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// Contiguous [T][H][D] fp32 (or 16-bit) view.
HeadsView View(void* data, int64_t tokens, int32_t heads, int32_t head_dim,
               DType dtype = DType::kFloat32) {
  HeadsView v;
  v.data = data;
  v.dtype = dtype;
  v.num_tokens = tokens;
  v.num_heads = heads;
  v.head_dim = head_dim;
  v.token_stride = int64_t{heads} * head_dim;
  v.head_stride = head_dim;
  return v;
}

HeadsView NoHeads(int64_t tokens, int32_t head_dim) { return View(nullptr, tokens, 0, head_dim); }

// Planar [3][T] positions.
PositionsView Positions(const std::vector<int64_t>& planar) {
  PositionsView p;
  p.data = planar.data();
  p.is_int64 = true;
  p.num_tokens = static_cast<int64_t>(planar.size() / 3);
  p.axis_stride = p.num_tokens;
  return p;
}

// Rotates a copy of one head `x` at one token with positions (t, h, w).
std::vector<float> Rotated(const RotarySpec& spec, std::vector<float> x,
                           std::vector<int64_t> position) {
  const absl::Status status = ApplyMropeReference(
      spec, Positions(position), View(x.data(), 1, 1, spec.head_dim), NoHeads(1, spec.head_dim));
  EXPECT_TRUE(status.ok()) << status;
  return x;
}

double Dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += double{a[i]} * b[i];
  return s;
}

class RelativePositionTest : public ::testing::TestWithParam<bool> {};

// <R(m) q, R(n) k> depends only on n - m when one axis varies and the others stay fixed.
TEST_P(RelativePositionTest, InnerProductDependsOnlyOnOffset) {
  const RotarySpec spec =
      GetParam() ? MakeSpec({24, 20, 20}, /*interleaved=*/true) : MakeSpec({16, 24, 24});
  const std::vector<float> q = RandomNormal(128, 1), k = RandomNormal(128, 2);
  const double scale = std::sqrt(Dot(q, q) * Dot(k, k));
  for (int axis = 0; axis < kNumAxes; ++axis) {
    auto dot_at = [&](int64_t m, int64_t n) {
      std::vector<int64_t> pq = {5, 7, 9}, pk = {5, 7, 9};
      pq[axis] = m;
      pk[axis] = n;
      return Dot(Rotated(spec, q, pq), Rotated(spec, k, pk));
    };
    const double reference = dot_at(3, 10);
    for (const auto& [m, n] : {std::pair<int, int>{0, 7}, {50, 57}, {190, 197}, {10, 17}}) {
      EXPECT_NEAR(dot_at(m, n), reference, 1e-5 * scale) << "axis " << axis << " " << m;
    }
    // A different offset changes it (axis w drives only low frequencies, so go far).
    EXPECT_GT(std::fabs(dot_at(3, 110) - reference), 1e-3 * scale) << "axis " << axis;
  }
}

INSTANTIATE_TEST_SUITE_P(BlockedAndInterleaved, RelativePositionTest, ::testing::Bool());

TEST(ApplyTest, EqualAxesGiveOneDimensionalRope) {
  const std::vector<float> x = RandomNormal(128, 3);
  const RotarySpec one_d = MakeSpec({});
  for (const RotarySpec& mrope : {MakeSpec({16, 24, 24}), MakeSpec({24, 20, 20}, true)}) {
    for (int64_t p : {0, 1, 17, 99, 4000, 123456}) {
      const std::vector<float> got = Rotated(mrope, x, {p, p, p});
      EXPECT_EQ(got, Rotated(one_d, x, {p, p, p}));
      if (p > 100) continue;
      // Independent float64 RoPE: y_j = x_j cos(p theta^(-2j/d)) - x_{j+64} sin(...), etc.
      for (int j = 0; j < 64; ++j) {
        const double a = p * std::pow(10000.0, -2.0 * j / 128.0);
        EXPECT_NEAR(got[j], x[j] * std::cos(a) - x[j + 64] * std::sin(a), 1e-4);
        EXPECT_NEAR(got[j + 64], x[j + 64] * std::cos(a) + x[j] * std::sin(a), 1e-4);
      }
    }
  }
}

TEST(ApplyTest, PreservesNormOfEveryPair) {
  const RotarySpec spec = MakeSpec({16, 24, 24});
  const std::vector<float> x = RandomNormal(128, 4);
  const std::vector<float> y = Rotated(spec, x, {1000, 20, 777});
  for (int j = 0; j < 64; ++j) {
    const double before = double{x[j]} * x[j] + double{x[j + 64]} * x[j + 64];
    const double after = double{y[j]} * y[j] + double{y[j + 64]} * y[j + 64];
    EXPECT_NEAR(after, before, 1e-6 * before + 1e-12) << j;
  }
}

// The backward pass: the inverse rotation of a forward-rotated head gives the head back, up to
// the rounding of the two rotations, and it is the transpose of the forward rotation: for any
// x and g, <R x, g> = <x, R^T g> (checked in double on the float outputs).
TEST(ApplyTest, InverseRotationIsTheGradientOfTheForwardOne) {
  for (const bool interleaved : {false, true}) {
    const RotarySpec spec =
        interleaved ? MakeSpec({24, 20, 20}, true) : MakeSpec({16, 24, 24});
    const std::vector<int64_t> position = {90000, 20, 777};
    const std::vector<float> x = RandomNormal(128, 11);
    const std::vector<float> g = RandomNormal(128, 12);
    const std::vector<float> y = Rotated(spec, x, position);
    std::vector<float> back = y;
    std::vector<float> grad = g;
    for (std::vector<float>* v : {&back, &grad}) {
      ASSERT_TRUE(ApplyMropeReference(spec, Positions(position),
                                      View(v->data(), 1, 1, spec.head_dim),
                                      NoHeads(1, spec.head_dim), RotationDirection::kInverse)
                      .ok());
    }
    for (int d = 0; d < 128; ++d) {
      const int partner = d < 64 ? d + 64 : d - 64;
      const double scale = std::hypot(x[d], x[partner]);
      EXPECT_NEAR(back[d], x[d], 4 * 0x1p-24 * scale + 1e-30) << d;  // two rotations' rounding
      EXPECT_NE(grad[d], g[d]) << "the inverse must rotate " << d;
    }
    EXPECT_NEAR(Dot(y, g), Dot(x, grad), 1e-5 * std::sqrt(Dot(x, x) * Dot(g, g)));
  }
}

TEST(ApplyTest, NeoxAndGptjAgreeUnderPairPermutation) {
  const RotarySpec neox = MakeSpec({16, 24, 24});
  const RotarySpec gptj = MakeSpec({16, 24, 24}, false, 128, 128, RotaryLayout::kGptj);
  const std::vector<float> x = RandomNormal(128, 5);
  std::vector<float> x_gptj(128);
  for (int j = 0; j < 64; ++j) {
    x_gptj[2 * j] = x[j];
    x_gptj[2 * j + 1] = x[j + 64];
  }
  const std::vector<float> y = Rotated(neox, x, {300, 4, 51});
  const std::vector<float> y_gptj = Rotated(gptj, x_gptj, {300, 4, 51});
  for (int j = 0; j < 64; ++j) {
    EXPECT_EQ(y_gptj[2 * j], y[j]);
    EXPECT_EQ(y_gptj[2 * j + 1], y[j + 64]);
  }
}

TEST(ApplyTest, PartialRotaryPassesTheRestThrough) {
  const RotarySpec spec = MakeSpec({8, 12, 12}, false, 128, 64);
  const std::vector<float> x = RandomNormal(128, 6);
  const std::vector<float> y = Rotated(spec, x, {9, 10, 11});
  for (int d = 64; d < 128; ++d) EXPECT_EQ(y[d], x[d]) << d;
  // Pairs are (j, j + 32) within the rotary part.
  const double a = 9.0;  // pair 0 uses axis t, inv_freq 1
  EXPECT_NEAR(y[0], x[0] * std::cos(a) - x[32] * std::sin(a), 1e-5);
}

TEST(ApplyTest, AttentionScalingMultipliesCosAndSin) {
  RotarySpec spec = MakeSpec({16, 24, 24});
  spec.attention_scaling = 1.5f;
  const std::vector<float> x = RandomNormal(128, 7);
  const std::vector<float> y = Rotated(spec, x, {0, 0, 0});
  for (int d = 0; d < 128; ++d) EXPECT_EQ(y[d], x[d] * 1.5f);
}

// bf16 / fp16 storage: widen exactly, rotate in fp32, round to nearest even.
void CheckSixteenBit(DType dtype, uint16_t (*narrow)(float), float (*widen)(uint16_t)) {
  const RotarySpec spec = MakeSpec({16, 24, 24});
  const int64_t tokens = 3;
  const std::vector<float> x = RandomNormal(tokens * 2 * 128, 8);
  std::vector<uint16_t> stored(x.size());
  std::vector<float> widened(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    stored[i] = narrow(x[i]);
    widened[i] = widen(stored[i]);
  }
  const std::vector<int64_t> pos = {1, 2, 3000, 4, 5, 60, 7, 800, 9};
  ASSERT_TRUE(ApplyMropeReference(spec, Positions(pos), View(stored.data(), tokens, 2, 128, dtype),
                                  NoHeads(tokens, 128))
                  .ok());
  ASSERT_TRUE(ApplyMropeReference(spec, Positions(pos), View(widened.data(), tokens, 2, 128),
                                  NoHeads(tokens, 128))
                  .ok());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(stored[i], narrow(widened[i])) << i;
}

TEST(ApplyTest, BFloat16Storage) {
  CheckSixteenBit(DType::kBFloat16, FloatToBFloat16, BFloat16ToFloat);
}

TEST(ApplyTest, Float16Storage) { CheckSixteenBit(DType::kFloat16, FloatToHalf, HalfToFloat); }

TEST(ApplyTest, StridedFusedQkvAndInt32Positions) {
  const RotarySpec spec = MakeSpec({24, 20, 20}, true);
  const int64_t tokens = 5, hq = 4, hk = 2, d = 128;
  const int64_t row = (hq + 2 * hk) * d + 16;  // q | k | v | padding
  const std::vector<float> original = RandomNormal(tokens * row, 9);
  std::vector<float> fused = original;
  std::vector<int64_t> pos64 = {0, 1, 2, 3, 4, 0, 10, 10, 11, 11, 0, 20, 21, 20, 21};
  std::vector<int32_t> pos32(pos64.begin(), pos64.end());
  PositionsView positions;
  positions.data = pos32.data();
  positions.is_int64 = false;
  positions.num_tokens = tokens;
  positions.axis_stride = tokens;
  HeadsView q = View(fused.data(), tokens, hq, d), k = View(fused.data() + hq * d, tokens, hk, d);
  q.token_stride = k.token_stride = row;
  ASSERT_TRUE(ApplyMropeReference(spec, positions, q, k).ok());
  // Same as rotating contiguous copies with int64 positions; v and padding untouched.
  std::vector<float> cq(tokens * hq * d), ck(tokens * hk * d);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t i = 0; i < hq * d; ++i) cq[t * hq * d + i] = original[t * row + i];
    for (int64_t i = 0; i < hk * d; ++i) ck[t * hk * d + i] = original[t * row + hq * d + i];
  }
  ASSERT_TRUE(ApplyMropeReference(spec, Positions(pos64), View(cq.data(), tokens, hq, d),
                                  View(ck.data(), tokens, hk, d))
                  .ok());
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t i = 0; i < hq * d; ++i) ASSERT_EQ(fused[t * row + i], cq[t * hq * d + i]);
    for (int64_t i = 0; i < hk * d; ++i) {
      ASSERT_EQ(fused[t * row + hq * d + i], ck[t * hk * d + i]);
    }
    for (int64_t i = (hq + hk) * d; i < row; ++i)
      ASSERT_EQ(fused[t * row + i], original[t * row + i]);
  }
}

TEST(ApplyTest, TableAndExplicitCosSinMatchOnTheFly) {
  RotarySpec spec = MakeSpec({16, 24, 24});
  spec.attention_scaling = 1.125f;
  const int64_t tokens = 4;
  const std::vector<float> x = RandomNormal(tokens * 3 * 128, 10);
  const std::vector<int64_t> pos = {0, 5, 999, 12, 3, 4, 5, 6, 100, 200, 300, 999};
  std::vector<float> a = x, b = x, c = x;
  ASSERT_TRUE(ApplyMropeReference(spec, Positions(pos), View(a.data(), tokens, 2, 128),
                                  View(a.data() + tokens * 2 * 128, tokens, 1, 128))
                  .ok());
  const absl::StatusOr<CosSinTable> table =
      CosSinTable::Create(spec.inv_freq, spec.attention_scaling, 1000);
  ASSERT_TRUE(table.ok());
  ASSERT_TRUE(ApplyMropeWithTable(spec, *table, Positions(pos), View(b.data(), tokens, 2, 128),
                                  View(b.data() + tokens * 2 * 128, tokens, 1, 128))
                  .ok());
  const absl::StatusOr<std::vector<CosSin>> cos_sin = ComputeCosSin(spec, Positions(pos));
  ASSERT_TRUE(cos_sin.ok());
  ASSERT_EQ(cos_sin->size(), static_cast<size_t>(tokens * 64));
  ASSERT_TRUE(ApplyRotaryCosSin(spec, *cos_sin, View(c.data(), tokens, 2, 128),
                                View(c.data() + tokens * 2 * 128, tokens, 1, 128))
                  .ok());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
  EXPECT_NE(a, x);
}

// Every invalid call returns InvalidArgument naming the problem and leaves q untouched.
TEST(ApplyTest, UnknownDirectionIsRefused) {
  const RotarySpec spec = MakeSpec({16, 24, 24});
  std::vector<float> x = RandomNormal(128, 13);
  const absl::Status status =
      ApplyMropeReference(spec, Positions({1, 2, 3}), View(x.data(), 1, 1, 128), NoHeads(1, 128),
                          static_cast<RotationDirection>(2));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("direction must be kForward or kInverse"));
}

TEST(ApplyTest, ValidationErrors) {
  const RotarySpec spec = MakeSpec({16, 24, 24});
  const std::vector<float> original = RandomNormal(2 * 128, 11);
  std::vector<float> q = original;
  const std::vector<int64_t> good = {1, 2, 3, 4, 5, 6};
  auto expect_error = [&](absl::Status status, const std::string& message) {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_THAT(status.message(), HasSubstr(message));
    EXPECT_EQ(q, original) << message;
  };
  const HeadsView qv = View(q.data(), 2, 1, 128);
  const HeadsView none = NoHeads(2, 128);

  HeadsView bad = qv;
  bad.head_dim = 64;
  expect_error(ApplyMropeReference(spec, Positions(good), bad, none),
               "q.head_dim must equal spec.head_dim = 128, got 64");
  expect_error(ApplyMropeReference(spec, Positions(good), qv, NoHeads(3, 128)),
               "k.num_tokens must equal the 2 tokens of the positions, got 3");
  bad = qv;
  bad.token_stride = -1;
  expect_error(ApplyMropeReference(spec, Positions(good), bad, none), "q strides must be >= 0");
  // q and k sharing elements (k is q's second token here) would be rotated twice.
  expect_error(ApplyMropeReference(spec, Positions(good), View(q.data(), 2, 1, 128),
                                   View(q.data() + 128, 2, 1, 128)),
               "q and k overlap");
  bad = qv;
  bad.data = nullptr;
  expect_error(ApplyMropeReference(spec, Positions(good), bad, none), "q.data is null");
  bad = qv;
  bad.dtype = static_cast<DType>(7);
  expect_error(ApplyMropeReference(spec, Positions(good), bad, none), "q.dtype must be");
  bad = qv;
  bad.token_stride = int64_t{1} << 61;  // 2^61 floats: the byte offset overflows int64
  expect_error(ApplyMropeReference(spec, Positions(good), bad, none), "overflows int64");

  // Positions are all checked before anything is written.
  expect_error(ApplyMropeReference(spec, Positions({1, 2, 3, 4, 5, -6}), qv, none),
               "positions[2][1] = -6 is outside [0, 16777216)");
  expect_error(ApplyMropeReference(spec, Positions({1, 2, 3, 4, 5, int64_t{1} << 24}), qv, none),
               "positions[2][1] = 16777216 is outside");
  PositionsView null_positions = Positions(good);
  null_positions.data = nullptr;
  expect_error(ApplyMropeReference(spec, null_positions, qv, none), "positions.data is null");

  RotarySpec bad_spec = spec;
  bad_spec.rotary_dim = 127;
  expect_error(ApplyMropeReference(bad_spec, Positions(good), qv, none),
               "spec.rotary_dim must be even");
  bad_spec = spec;
  bad_spec.inv_freq.pop_back();
  expect_error(ApplyMropeReference(bad_spec, Positions(good), qv, none),
               "spec.inv_freq must have rotary_dim / 2 = 64 entries, got 63");
  bad_spec = spec;
  bad_spec.axis_map.axis[3] = 5;
  expect_error(ApplyMropeReference(bad_spec, Positions(good), qv, none), "axis_map.axis[3]=");

  const absl::StatusOr<CosSinTable> table =
      CosSinTable::Create(spec.inv_freq, spec.attention_scaling, 5);
  ASSERT_TRUE(table.ok());
  expect_error(ApplyMropeWithTable(spec, *table, Positions(good), qv, none),
               "positions[2][0] = 5 is outside [0, 5)");
  const absl::StatusOr<CosSinTable> other = CosSinTable::Create(spec.inv_freq, 2.0f, 10);
  ASSERT_TRUE(other.ok());
  expect_error(ApplyMropeWithTable(spec, *other, Positions(good), qv, none),
               "cos/sin table was not built from spec");
  expect_error(ApplyRotaryCosSin(spec, std::vector<CosSin>(127), qv, none),
               "cos_sin must have q.num_tokens * rotary_dim / 2 = 2 * 64 entries, got 127");
}

TEST(ApplyTest, EmptyInputsAreFine) {
  const RotarySpec spec = MakeSpec({16, 24, 24});
  EXPECT_TRUE(ApplyMropeReference(spec, Positions({}), NoHeads(0, 128), NoHeads(0, 128)).ok());
}

}  // namespace
}  // namespace mrope
