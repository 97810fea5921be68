// Host-only tests of the fused kernel's argument validation and launch planning: no GPU, no
// CUDA. Pointers are made-up device addresses; validation never dereferences them.

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/fused_kernel_validate.h"
#include "kernels/internal/fused_launch_plan.h"
#include "mrope/rotary/axis_map.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;

constexpr uintptr_t kQkv = uintptr_t{1} << 32;
constexpr uintptr_t kPositions = uintptr_t{1} << 40;
constexpr uintptr_t kErrorFlag = uintptr_t{1} << 41;
constexpr uintptr_t kWeights = uintptr_t{1} << 42;
constexpr uintptr_t kSlots = uintptr_t{1} << 43;
constexpr uintptr_t kKCache = uintptr_t{1} << 44;
constexpr uintptr_t kVCache = uintptr_t{1} << 45;
constexpr uintptr_t kScales = uintptr_t{1} << 46;
constexpr uintptr_t kQOut = uintptr_t{1} << 47;

void* At(uintptr_t address) { return reinterpret_cast<void*>(address); }

RotarySpec Spec(int head_dim = 128, int rotary_dim = 128) {
  RotarySpec spec;
  spec.head_dim = head_dim;
  spec.rotary_dim = rotary_dim;
  const int pairs = rotary_dim / 2;
  const int s = 5 * pairs / 16;
  spec.axis_map = InterleavedAxisMap({pairs - 2 * s, s, s}, pairs).value();
  for (int j = 0; j < pairs; ++j) spec.inv_freq.push_back(std::pow(5e6f, -2.0f * j / rotary_dim));
  return spec;
}

// Qwen3-VL-8B-like: 32 q / 8 kv heads of a fused bf16 qkv buffer, bf16 NHD cache of 64 blocks.
FusedMropeArgs Args(int64_t num_tokens = 100, int hq = 32, int hk = 8, int head_dim = 128) {
  const int64_t ts = int64_t{hq + 2 * hk} * head_dim;
  FusedMropeArgs a;
  a.q = {At(kQkv), DType::kBFloat16, num_tokens, hq, head_dim, ts, head_dim};
  a.k = {At(kQkv + uintptr_t(hq) * head_dim * 2), DType::kBFloat16, num_tokens, hk, head_dim, ts,
         head_dim};
  a.v = {At(kQkv + uintptr_t(hq + hk) * head_dim * 2), DType::kBFloat16, num_tokens, hk, head_dim,
         ts, head_dim};
  a.q_norm = {QkNormForm::kWeight, At(kWeights), DType::kBFloat16, 1e-6f};
  a.k_norm = {QkNormForm::kWeight, At(kWeights + 4096), DType::kBFloat16, 1e-6f};
  a.positions = {At(kPositions), true, num_tokens, num_tokens};
  a.slot_mapping = reinterpret_cast<const int64_t*>(kSlots);
  a.cache = {At(kKCache), At(kVCache), DType::kBFloat16, 64, 16, hk, head_dim,
             16 * hk * head_dim, hk * head_dim, head_dim};
  a.error_flag = static_cast<int*>(At(kErrorFlag));
  return a;
}

TEST(FusedArgsTest, ValidArgumentsPass) {
  EXPECT_TRUE(ValidateFusedMropeArgs(Spec(), Args()).ok());
  FusedMropeArgs hnd = Args();
  hnd.cache.head_stride = 16 * 128;
  hnd.cache.slot_stride = 128;
  EXPECT_TRUE(ValidateFusedMropeArgs(Spec(), hnd).ok());
  FusedMropeArgs fp8 = Args();
  fp8.cache.dtype = DType::kFloat8E4m3;
  fp8.cache.k_scale = static_cast<const float*>(At(kScales));
  fp8.cache.v_scale = static_cast<const float*>(At(kScales + 4));
  fp8.q_out = {At(kQOut), DType::kFloat8E4m3, 100, 32, 128, 32 * 128, 128};
  fp8.q_scale = static_cast<const float*>(At(kScales + 8));
  EXPECT_TRUE(ValidateFusedMropeArgs(Spec(), fp8).ok());
  FusedMropeArgs no_cache = Args();
  no_cache.slot_mapping = nullptr;
  no_cache.k_out = no_cache.k;  // in place
  EXPECT_TRUE(ValidateFusedMropeArgs(Spec(), no_cache).ok());
}

struct BadCase {
  std::string name;
  std::function<void(FusedMropeArgs&)> edit;
  std::string message;
};

class FusedBadArgsTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(FusedBadArgsTest, RefusedNamingTheField) {
  FusedMropeArgs a = Args();
  GetParam().edit(a);
  const absl::Status status = ValidateFusedMropeArgs(Spec(), a);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(GetParam().message));
  EXPECT_FALSE(kernel_internal::PlanFusedLaunch(Spec(), a).ok());
}

const float* Scale(uintptr_t offset) { return static_cast<const float*>(At(kScales + offset)); }

INSTANTIATE_TEST_SUITE_P(
    Fields, FusedBadArgsTest,
    ::testing::Values(
        BadCase{"NoV", [](FusedMropeArgs& a) { a.v.data = nullptr; }, "v.data is null"},
        BadCase{"VDtype", [](FusedMropeArgs& a) { a.v.dtype = DType::kFloat16; }, "v.dtype=2"},
        BadCase{"VHeads", [](FusedMropeArgs& a) { a.v.num_heads = 7; }, "v is [100][7]"},
        BadCase{"QIsFp8", [](FusedMropeArgs& a) { a.q.dtype = DType::kFloat8E4m3; },
                "q.dtype=3 is not fp32, bf16 or fp16"},
        BadCase{"QOutShape",
                [](FusedMropeArgs& a) {
                  a.q_out = {At(kQOut), DType::kBFloat16, 99, 32, 128, 4096, 128};
                },
                "q_out is [99][32]"},
        BadCase{"QOutDtype",
                [](FusedMropeArgs& a) {
                  a.q_out = {At(kQOut), DType::kFloat16, 100, 32, 128, 4096, 128};
                },
                "q_out.dtype=2 must be q's dtype or fp8 e4m3"},
        BadCase{"QOutFp8WithoutScale",
                [](FusedMropeArgs& a) {
                  a.q_out = {At(kQOut), DType::kFloat8E4m3, 100, 32, 128, 4096, 128};
                },
                "must be a non-null, 4-byte aligned device float for fp8"},
        BadCase{"QOutOverlapsK",
                [](FusedMropeArgs& a) {
                  a.q_out = a.k;
                  a.q_out.num_heads = 32;
                  a.q_out.token_stride = 32 * 128;
                },
                "q_out overlaps"},
        BadCase{"KOutOverlapsV", [](FusedMropeArgs& a) { a.k_out = a.v; }, "k_out overlaps v"},
        BadCase{"NormForm",
                [](FusedMropeArgs& a) { a.q_norm.form = static_cast<QkNormForm>(7); },
                "q_norm.form=7"},
        BadCase{"NormWeightNull", [](FusedMropeArgs& a) { a.k_norm.weight = nullptr; },
                "k_norm.weight is null"},
        BadCase{"NormWeightDtype",
                [](FusedMropeArgs& a) { a.k_norm.weight_dtype = DType::kFloat8E4m3; },
                "k_norm.weight_dtype=3"},
        BadCase{"NormWeightMisaligned",
                [](FusedMropeArgs& a) { a.q_norm.weight = At(kWeights + 1); },
                "q_norm.weight=0x40000000001 is not aligned"},
        BadCase{"NormEpsNaN", [](FusedMropeArgs& a) { a.q_norm.eps = std::nanf(""); },
                "q_norm.eps=nan must be finite"},
        BadCase{"NormEpsNegative", [](FusedMropeArgs& a) { a.k_norm.eps = -1.0f; },
                "k_norm.eps=-1 must be finite and >= 0"},
        BadCase{"SlotsMisaligned",
                [](FusedMropeArgs& a) {
                  a.slot_mapping = reinterpret_cast<const int64_t*>(kSlots + 4);
                },
                "slot_mapping=0x80000000004 is not 8-byte aligned"},
        BadCase{"CacheVNull", [](FusedMropeArgs& a) { a.cache.v = nullptr; }, "must both be set"},
        BadCase{"CacheDtype", [](FusedMropeArgs& a) { a.cache.dtype = DType::kFloat32; },
                "cache.dtype=0 must be k's dtype"},
        BadCase{"CacheBlocks", [](FusedMropeArgs& a) { a.cache.num_blocks = 0; },
                "cache.num_blocks=0 and cache.block_size=16 must be at least 1"},
        BadCase{"CacheSlotsOverflow",
                [](FusedMropeArgs& a) {
                  a.cache.num_blocks = int64_t{1} << 60;
                  a.cache.block_size = 64;
                },
                "overflows int64"},
        BadCase{"CacheHeads", [](FusedMropeArgs& a) { a.cache.num_heads = 4; },
                "cache.num_heads=4 differs from k.num_heads=8"},
        BadCase{"CacheHeadDim", [](FusedMropeArgs& a) { a.cache.head_dim = 64; },
                "cache.head_dim=64 differs from spec.head_dim=128"},
        BadCase{"CacheNegativeStride", [](FusedMropeArgs& a) { a.cache.slot_stride = -1; },
                "cache.slot_stride=-1 is negative"},
        BadCase{"CacheRowsOverlap", [](FusedMropeArgs& a) { a.cache.slot_stride = 512; },
                "cache rows overlap: slot_stride=512"},
        BadCase{"CacheExtentOverflow",
                [](FusedMropeArgs& a) { a.cache.block_stride = int64_t{1} << 62; },
                "cache extent"},
        BadCase{"Fp8CacheWithoutScales",
                [](FusedMropeArgs& a) { a.cache.dtype = DType::kFloat8E4m3; },
                "cache.k_scale="},
        BadCase{"Fp8CacheMisalignedScale",
                [](FusedMropeArgs& a) {
                  a.cache.dtype = DType::kFloat8E4m3;
                  a.cache.k_scale = Scale(0);
                  a.cache.v_scale = Scale(2);
                },
                "cache.v_scale=0x400000000002"},
        BadCase{"KCacheOverlapsVCache", [](FusedMropeArgs& a) { a.cache.v = At(kKCache + 256); },
                "cache.k"},
        BadCase{"CacheOverlapsQkv", [](FusedMropeArgs& a) { a.cache.k = At(kQkv + 64); },
                "cache.k"},
        BadCase{"NoCacheNoKOut", [](FusedMropeArgs& a) { a.slot_mapping = nullptr; },
                "neither slot_mapping nor k_out"},
        BadCase{"NoErrorFlag", [](FusedMropeArgs& a) { a.error_flag = nullptr; },
                "error_flag is null"},
        BadCase{"UnknownDirection",
                [](FusedMropeArgs& a) { a.direction = static_cast<RotationDirection>(5); },
                "direction=5 is not kForward or kInverse"},
        BadCase{"BackwardWithANorm",
                [](FusedMropeArgs& a) { a.direction = RotationDirection::kInverse; },
                "only the rotary's backward is provided"},
        BadCase{"TwoPositionSources",
                [](FusedMropeArgs& a) {
                  a.sequence_delta.token_index = reinterpret_cast<const int64_t*>(kPositions);
                },
                "exactly one position source"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

TEST(FusedPlanTest, PrefillCoversEveryHeadInBalancedPassesAllInFlight) {
  const auto plan = kernel_internal::PlanFusedLaunch(Spec(), Args(/*num_tokens=*/4096));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->vectorized);
  EXPECT_EQ(plan->block_x, 16u);  // 16 chunks of 8 bf16 per head
  // 40 heads in kPassesInFlight = 4 passes of 10 slots (not 3 of 14: 16 fit in 256 threads),
  // so that each thread issues the loads of all its heads at once.
  EXPECT_EQ(kernel_internal::FusedPassesInFlight(2, true), 4);
  EXPECT_EQ(plan->block_y, 10u);
  EXPECT_EQ(plan->block_z, 1u);
  EXPECT_EQ(plan->grid_y, 1u);
  EXPECT_EQ(plan->params.heads_per_chunk, 40);
  EXPECT_EQ(plan->params.num_slots, 64 * 16);
}

TEST(FusedPlanTest, DecodeSplitsHeadsIntoChunksOfAThreadPerPair) {
  const auto plan = kernel_internal::PlanFusedLaunch(Spec(), Args(/*num_tokens=*/2));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->grid_x, 2u);
  // 132 chunks wanted; 4 heads of 16 lanes each keep a thread per pair (64): 10 chunks.
  EXPECT_EQ(plan->params.heads_per_chunk, 4);
  EXPECT_EQ(plan->grid_y, 10u);
  EXPECT_EQ(plan->block_x * plan->block_y, 64u);
  EXPECT_EQ(plan->block_z, 1u);
}

TEST(FusedPlanTest, MisalignedViewsTakeTheScalarPath) {
  FusedMropeArgs a = Args();
  a.q.data = At(kQkv + 2);  // one bf16 element off
  a.k.data = At(kQkv + 2 + 32 * 128 * 2);
  a.v.data = At(kQkv + 2 + 40 * 128 * 2);
  const auto plan = kernel_internal::PlanFusedLaunch(Spec(), a);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->vectorized);
}

// HunYuan-VL's forms take the kernel that has them (xd_forms): split halves (XD-RoPE, four
// axes) or the norm of the rotated head on its own; tokens per block fit a cos/sin per element
// and num_axes position slots per token. The others keep the kernel without them.
TEST(FusedPlanTest, XdFormsTakeTheirKernelAndFitItsSharedMemory) {
  FusedMropeArgs a = Args(4096, 1, 1, 64);
  const auto three_axes = kernel_internal::PlanFusedLaunch(Spec(64, 32), a);
  ASSERT_TRUE(three_axes.ok()) << three_axes.status();
  EXPECT_FALSE(three_axes->xd_forms);
  EXPECT_EQ(three_axes->block_z, 16u);

  RotarySpec xd = Spec(64, 32);
  xd.axis_map = XdAxisMap({4, 4, 4, 4}, 16).value();
  const auto split = kernel_internal::PlanFusedLaunch(xd, a);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_TRUE(split->xd_forms);
  EXPECT_EQ(split->params.rotary.num_axes, 4);
  // 16 tokens would fit the stage and the cos/sin of 32 elements; 48 / 4 position slots do not.
  EXPECT_EQ(split->block_z, 12u);

  FusedMropeArgs after = Args(4096, 1, 1, 64);
  after.q_norm.form = QkNormForm::kWeightAfterRotary;
  const auto after_plan = kernel_internal::PlanFusedLaunch(Spec(64, 64), after);
  ASSERT_TRUE(after_plan.ok()) << after_plan.status();
  EXPECT_TRUE(after_plan->xd_forms);
  EXPECT_FALSE(after_plan->params.rotary.split_halves);
  EXPECT_LE(after_plan->block_z * 64, static_cast<uint32_t>(kernel_internal::kSharedPairs));
}

TEST(FusedPlanTest, EmptyBatchLaunchesNothing) {
  const auto plan = kernel_internal::PlanFusedLaunch(Spec(), Args(/*num_tokens=*/0));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->grid_x, 0u);
}

}  // namespace
}  // namespace mrope
