// Host-only tests of the kernel's argument validation and launch planning: no GPU, no CUDA.
// Pointers are made-up device addresses; validation never dereferences them.

#include "kernels/mrope_kernel_args.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_params.h"
#include "kernels/launch_plan.h"
#include "kernels/mrope_kernel_validate.h"
#include "mrope/rotary/axis_map.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {
namespace {

using kernel_internal::LaunchPlan;
using kernel_internal::PlanMropeLaunch;
using ::testing::HasSubstr;

constexpr uintptr_t kQkv = uintptr_t{1} << 32;  // fake, 16-byte aligned device addresses
constexpr uintptr_t kPositions = uintptr_t{1} << 40;
constexpr uintptr_t kErrorFlag = uintptr_t{1} << 41;
constexpr uintptr_t kTable = uintptr_t{1} << 42;

void* At(uintptr_t address) { return reinterpret_cast<void*>(address); }

RotarySpec MakeSpec(int head_dim, int rotary_dim, RotaryLayout layout) {
  RotarySpec spec;
  spec.head_dim = head_dim;
  spec.rotary_dim = rotary_dim;
  spec.layout = layout;
  const int num_pairs = rotary_dim / 2;
  const int t = num_pairs - 2 * (3 * num_pairs / 8);
  spec.axis_map = BlockedAxisMap({t, 3 * num_pairs / 8, 3 * num_pairs / 8}, num_pairs).value();
  for (int j = 0; j < num_pairs; ++j) {
    spec.inv_freq.push_back(std::pow(10000.0f, -2.0f * j / rotary_dim));
  }
  return spec;
}

// q and k as slices of a fused qkv buffer [T][(Hq + 2 Hk) * D].
MropeKernelArgs FusedArgs(DType dtype, int64_t num_tokens, int hq, int hk, int head_dim) {
  const int element_size = ElementSize(dtype);
  const int64_t token_stride = int64_t{hq + 2 * hk} * head_dim;
  MropeKernelArgs args;
  args.q = {At(kQkv), dtype, num_tokens, hq, head_dim, token_stride, head_dim};
  args.k = {At(kQkv + uintptr_t(hq) * head_dim * element_size),
            dtype,
            num_tokens,
            hk,
            head_dim,
            token_stride,
            head_dim};
  args.positions = {At(kPositions), /*is_int64=*/true, num_tokens, /*axis_stride=*/num_tokens};
  args.error_flag = static_cast<int*>(At(kErrorFlag));
  return args;
}

class ValidateTest : public ::testing::Test {
 protected:
  void ExpectInvalid(const std::string& substring) {
    const absl::Status status = ValidateMropeKernelArgs(spec_, args_);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(substring));
  }

  // Qwen2-VL-7B: Hq 28, Hk 4, D 128, bf16, 100 tokens.
  RotarySpec spec_ = MakeSpec(128, 128, RotaryLayout::kNeox);
  MropeKernelArgs args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
};

TEST_F(ValidateTest, AcceptsFusedQkvSlices) {
  EXPECT_TRUE(ValidateMropeKernelArgs(spec_, args_).ok());
}

TEST_F(ValidateTest, AcceptsHeadMajorViews) {
  args_.q = {At(kQkv),
             DType::kBFloat16,
             100,
             28,
             128,
             /*token_stride=*/128,
             /*head_stride=*/100 * 128};
  args_.k = {At(kQkv + 28 * 100 * 128 * 2), DType::kBFloat16, 100, 4, 128, 128, 100 * 128};
  EXPECT_TRUE(ValidateMropeKernelArgs(spec_, args_).ok());
}

TEST_F(ValidateTest, AcceptsOddHeadDimWithEvenRotaryDim) {
  spec_ = MakeSpec(81, 80, RotaryLayout::kNeox);
  args_ = FusedArgs(DType::kFloat32, 5, 2, 2, 81);
  EXPECT_TRUE(ValidateMropeKernelArgs(spec_, args_).ok());
}

TEST_F(ValidateTest, RejectsHeadDim514) {
  spec_.head_dim = 514;
  ExpectInvalid("spec.head_dim=514");
}

TEST_F(ValidateTest, RejectsOddRotaryDim) {
  spec_.rotary_dim = 63;
  ExpectInvalid("spec.rotary_dim=63");
}

TEST_F(ValidateTest, RejectsRotaryDimAboveHeadDim) {
  spec_.rotary_dim = 130;
  ExpectInvalid("spec.rotary_dim=130");
}

TEST_F(ValidateTest, RejectsBadLayout) {
  spec_.layout = static_cast<RotaryLayout>(7);
  ExpectInvalid("spec.layout=7");
}

TEST_F(ValidateTest, RejectsSectionsNotCoveringRotaryDim) {
  spec_.axis_map = BlockedAxisMap({16, 24, 20}, 60).value();
  ExpectInvalid("spec.axis_map.num_pairs=60");
}

TEST_F(ValidateTest, RejectsAxisOutsideTHW) {
  spec_.axis_map.axis[17] = 3;
  ExpectInvalid("axis_map.axis[17]=3");
}

TEST_F(ValidateTest, RejectsInvFreqOfWrongSize) {
  spec_.inv_freq.pop_back();
  ExpectInvalid("spec.inv_freq has 63 entries");
}

TEST_F(ValidateTest, RejectsNonFiniteInvFreqAndScaling) {
  spec_.inv_freq[5] = std::numeric_limits<float>::quiet_NaN();
  ExpectInvalid("spec.inv_freq[5]=nan");
  spec_ = MakeSpec(128, 128, RotaryLayout::kNeox);
  spec_.attention_scaling = std::numeric_limits<float>::infinity();
  ExpectInvalid("spec.attention_scaling=inf");
}

TEST_F(ValidateTest, TableMakesInvFreqOptional) {
  spec_.inv_freq.clear();
  args_.table = {static_cast<const float*>(At(kTable)),
                 static_cast<const float*>(At(kTable + 4 * 64)), 4096, 128};
  EXPECT_TRUE(ValidateMropeKernelArgs(spec_, args_).ok());
}

TEST_F(ValidateTest, RejectsNullPointers) {
  args_.q.data = nullptr;
  ExpectInvalid("q.data is null");
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.k.data = nullptr;
  ExpectInvalid("k.data is null");
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.error_flag = nullptr;
  ExpectInvalid("error_flag is null");
}

TEST_F(ValidateTest, RejectsMissingOrDoublePositionSource) {
  args_.positions.data = nullptr;
  ExpectInvalid("exactly one position source");
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.sequence_delta.token_index = static_cast<const int64_t*>(At(kPositions + 4096));
  ExpectInvalid("exactly one position source");
}

TEST_F(ValidateTest, RejectsMisalignedElements) {
  args_.q.data = At(kQkv + 1);
  ExpectInvalid("q.data=");
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.positions.data = At(kPositions + 4);
  ExpectInvalid("positions.data=");
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.error_flag = static_cast<int*>(At(kErrorFlag + 2));
  ExpectInvalid("error_flag=");
}

TEST_F(ValidateTest, RejectsDTypeAndTokenMismatches) {
  args_.k.dtype = DType::kFloat16;
  ExpectInvalid("q.dtype=1 differs from k.dtype=2");
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.q.dtype = static_cast<DType>(9);
  ExpectInvalid("q.dtype=9");
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.k.num_tokens = 99;
  ExpectInvalid("q.num_tokens=100 differs from k.num_tokens=99");
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.positions.num_tokens = 101;
  ExpectInvalid("positions.num_tokens=101");
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.q.head_dim = 64;
  ExpectInvalid("q.head_dim=64 differs from spec.head_dim=128");
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.k.num_heads = 0;
  ExpectInvalid("k.num_heads=0");
}

TEST_F(ValidateTest, RejectsBadStrides) {
  args_.q.head_stride = 100;  // heads overlap
  ExpectInvalid("q rows overlap");
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.k.token_stride = 3 * 128;  // tokens overlap the next token's heads
  ExpectInvalid("k rows overlap");
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.q.token_stride = -4608;
  ExpectInvalid("q.token_stride=-4608 is negative");
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.positions.axis_stride = -1;
  ExpectInvalid("positions.axis_stride=-1");
}

TEST_F(ValidateTest, IgnoresStridesOfSizeOneDimensions) {
  args_ = FusedArgs(DType::kBFloat16, 1, 28, 4, 128);
  args_.q.token_stride = -7;
  args_.k.token_stride = 0;
  EXPECT_TRUE(ValidateMropeKernelArgs(spec_, args_).ok());
}

TEST_F(ValidateTest, RejectsOffsetOverflow) {
  args_.q.token_stride = std::numeric_limits<int64_t>::max() / 50;
  ExpectInvalid("q offsets overflow 64 bits");
}

TEST_F(ValidateTest, RejectsOverlappingQAndK) {
  args_.k.data = args_.q.data;
  ExpectInvalid("q and k overlap");
  // k starting inside q's last head of every token.
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.k.data = At(kQkv + 27 * 128 * 2 + 64);
  ExpectInvalid("q and k overlap");
  // k's heads of token t run into q's heads of token t + 1.
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.k.data = At(kQkv + (36 * 128 - 2 * 128) * 2);
  ExpectInvalid("q and k overlap");
  // Contiguous k laid over the middle of q.
  args_ = FusedArgs(DType::kBFloat16, 100, 28, 4, 128);
  args_.k = {At(kQkv + 4096), DType::kBFloat16, 100, 4, 128, 4 * 128, 128};
  ExpectInvalid("q and k overlap");
}

TEST_F(ValidateTest, AcceptsDisjointInterleavedSlices) {
  // k in the v slot of the fused buffer: still disjoint from q.
  args_.k.data = At(kQkv + 32 * 128 * 2);
  EXPECT_TRUE(ValidateMropeKernelArgs(spec_, args_).ok());
  // k before q inside each token: [k | q | v].
  args_.k.data = At(kQkv);
  args_.q.data = At(kQkv + 4 * 128 * 2);
  EXPECT_TRUE(ValidateMropeKernelArgs(spec_, args_).ok());
}

TEST_F(ValidateTest, RejectsBadTable) {
  args_.table.cos = static_cast<const float*>(At(kTable));
  ExpectInvalid("must both be set");
  args_.table.sin = static_cast<const float*>(At(kTable + 256));
  args_.table.max_position = 0;
  ExpectInvalid("table.max_position=0");
  args_.table.max_position = 10;
  args_.table.row_stride = 63;
  ExpectInvalid("table.row_stride=63");
  args_.table.row_stride = std::numeric_limits<int64_t>::max() / 4;
  ExpectInvalid("overflows 64-bit offsets");
}

TEST_F(ValidateTest, SequenceDeltaPositions) {
  args_.positions = {};
  args_.sequence_delta = {static_cast<const int64_t*>(At(kPositions)), nullptr,
                          static_cast<const int64_t*>(At(kPositions + 4096)), 100, 100};
  EXPECT_TRUE(ValidateMropeKernelArgs(spec_, args_).ok());
  args_.sequence_delta.num_seqs = 3;
  ExpectInvalid("num_seqs=3 differs from num_tokens=100");
  args_.sequence_delta.seq_id = static_cast<const int32_t*>(At(kPositions + 8192));
  EXPECT_TRUE(ValidateMropeKernelArgs(spec_, args_).ok());
  args_.sequence_delta.delta = nullptr;
  ExpectInvalid("sequence_delta.delta is null");
  args_.sequence_delta.delta = static_cast<const int64_t*>(At(kPositions + 4096));
  args_.sequence_delta.num_tokens = 7;
  ExpectInvalid("sequence_delta.num_tokens=7");
}

TEST(PlanTest, Qwen2VlPrefillUsesTheSpecialisedVectorKernel) {
  const RotarySpec spec = MakeSpec(128, 128, RotaryLayout::kNeox);
  const LaunchPlan plan =
      PlanMropeLaunch(spec, FusedArgs(DType::kBFloat16, 8192, 28, 4, 128)).value();
  EXPECT_TRUE(plan.vectorized);
  EXPECT_EQ(plan.specialized_rotary_dim, 128);
  EXPECT_EQ(plan.block_x, 8u);   // 64 pairs / 8 bf16 per access
  // 32 heads in kPassesInFlight passes of 8, all loads in flight before the barriers; 4 tokens
  // fill the 256 threads.
  EXPECT_EQ(plan.block_y, 8u);
  EXPECT_EQ(plan.passes_in_flight, kernel_internal::kPassesInFlight);
  EXPECT_EQ(plan.block_z, 4u);
  EXPECT_EQ(plan.grid_x, 2048u);
  EXPECT_EQ(plan.grid_y, 1u);
  EXPECT_EQ(plan.params.heads_per_chunk, 32);
  EXPECT_EQ(plan.params.q_token_stride, 36 * 128);
  EXPECT_EQ(plan.params.rotary.position_limit, kMaxPosition);
}

TEST(PlanTest, SmallBatchesSplitHeadsAcrossBlocks) {
  const RotarySpec spec = MakeSpec(128, 128, RotaryLayout::kNeox);
  // Qwen2.5-VL-72B, 16 tokens: 64 + 8 heads in 9 chunks of 8 (64 threads per block: one for
  // each of the token's 64 cos/sin slots), 144 blocks.
  const LaunchPlan decode =
      PlanMropeLaunch(spec, FusedArgs(DType::kBFloat16, 16, 64, 8, 128)).value();
  EXPECT_EQ(decode.block_y, 8u);
  EXPECT_EQ(decode.block_z, 1u);
  EXPECT_EQ(decode.grid_y, 9u);
  EXPECT_EQ(decode.params.heads_per_chunk, 8);
  EXPECT_EQ(decode.passes_in_flight, 1);
  // Qwen2-VL-7B, one token: 28 + 4 heads in 4 chunks of 64 threads.
  const LaunchPlan one =
      PlanMropeLaunch(spec, FusedArgs(DType::kBFloat16, 1, 28, 4, 128)).value();
  EXPECT_EQ(one.block_x * one.block_y * one.block_z, 64u);
  EXPECT_EQ(one.grid_x * one.grid_y, 4u);
  // Large enough batches keep one chunk of every head per block.
  const LaunchPlan many =
      PlanMropeLaunch(spec, FusedArgs(DType::kBFloat16, 512, 28, 4, 128)).value();
  EXPECT_EQ(many.grid_y, 1u);
  EXPECT_EQ(many.params.heads_per_chunk, 32);
  const LaunchPlan prefill =
      PlanMropeLaunch(spec, FusedArgs(DType::kBFloat16, 4096, 64, 8, 128)).value();
  EXPECT_EQ(prefill.block_y, 18u);  // 72 heads in 4 passes
  EXPECT_EQ(prefill.passes_in_flight, kernel_internal::kPassesInFlight);
  EXPECT_EQ(prefill.grid_y, 1u);
  EXPECT_EQ(prefill.params.heads_per_chunk, 72);
}

TEST(PlanTest, FewHeadsPackSeveralTokensPerBlock) {
  const RotarySpec spec = MakeSpec(64, 64, RotaryLayout::kGptj);
  const LaunchPlan plan =
      PlanMropeLaunch(spec, FusedArgs(DType::kBFloat16, 1000, 2, 2, 64)).value();
  EXPECT_EQ(plan.block_x, 4u);
  EXPECT_EQ(plan.block_y, 4u);
  EXPECT_EQ(plan.block_z, 16u);
  EXPECT_EQ(plan.grid_x, 63u);  // ceil(1000 / 16)
  EXPECT_LE(plan.block_z * 32, static_cast<uint32_t>(kernel_internal::kSharedPairs));
}

// XD-RoPE: the split-halves kernels (generic rotary_dim), with positions [num_axes][T], a
// cos/sin per element and num_axes position slots per token in shared memory; the three-axis
// plans above are unchanged.
TEST(PlanTest, XdRopeFitsItsAxesAndElementsInSharedMemory) {
  for (const auto& [axes, rotary_dim] : {std::make_pair(4, 128), std::make_pair(4, 32),
                                         std::make_pair(8, 32), std::make_pair(8, 16)}) {
    SCOPED_TRACE(absl::StrCat(axes, " axes, rotary_dim ", rotary_dim));
    RotarySpec spec = MakeSpec(128, rotary_dim, RotaryLayout::kNeox);
    const int pairs = rotary_dim / 2;
    spec.axis_map = XdAxisMap(std::vector<int32_t>(axes, pairs / axes), pairs).value();
    MropeKernelArgs args = FusedArgs(DType::kBFloat16, 3000, 2, 2, 128);
    const LaunchPlan plan = PlanMropeLaunch(spec, args).value();
    EXPECT_TRUE(plan.params.rotary.split_halves);
    EXPECT_EQ(plan.params.rotary.num_axes, axes);
    EXPECT_EQ(plan.specialized_rotary_dim, 0);
    EXPECT_LE(plan.block_z * axes, static_cast<uint32_t>(kernel_internal::kSharedPositions));
    EXPECT_LE(plan.block_z * rotary_dim, static_cast<uint32_t>(kernel_internal::kSharedPairs));
    for (int j = 0; j < pairs; ++j) {
      EXPECT_EQ(kernel_internal::UnpackPairAxis<true>(plan.params.rotary.pair_axes, j, false),
                spec.axis_map.axis[j]);
      EXPECT_EQ(kernel_internal::UnpackPairAxis<true>(plan.params.rotary.pair_axes, j, true),
                spec.axis_map.second_axis[j]);
    }
    // [axes][T] int64 positions: the bytes up to the last row must fit 64 bits (three rows
    // of this stride would).
    args.positions.axis_stride = std::numeric_limits<int64_t>::max() / (8 * (axes - 1)) + 1;
    EXPECT_THAT(std::string(ValidateMropeKernelArgs(spec, args).message()),
                HasSubstr("positions.axis_stride"));
    // GPT-J pairs: XD's halves are NeoX halves.
    spec.layout = RotaryLayout::kGptj;
    EXPECT_EQ(ValidateMropeKernelArgs(spec, FusedArgs(DType::kBFloat16, 30, 2, 2, 128)).code(),
              absl::StatusCode::kUnimplemented);
  }
}

TEST(PlanTest, FallsBackToScalarAccessWhenNot16ByteAligned) {
  const RotarySpec spec = MakeSpec(128, 128, RotaryLayout::kNeox);
  MropeKernelArgs args = FusedArgs(DType::kBFloat16, 10, 4, 4, 128);
  args.q.data = At(kQkv + 8);  // 8-byte aligned only
  args.k.data = At(kQkv + 8 + 4 * 128 * 2);
  LaunchPlan plan = PlanMropeLaunch(spec, args).value();
  EXPECT_FALSE(plan.vectorized);
  EXPECT_EQ(plan.specialized_rotary_dim, 0);
  EXPECT_EQ(plan.block_x, 64u);  // one pair per thread

  // Strides that break 16-byte alignment of later tokens.
  args = FusedArgs(DType::kFloat32, 10, 4, 4, 130);
  plan = PlanMropeLaunch(MakeSpec(130, 128, RotaryLayout::kNeox), args).value();
  EXPECT_FALSE(plan.vectorized);

  // rotary_dim / 2 not a multiple of the access width.
  plan = PlanMropeLaunch(MakeSpec(128, 20, RotaryLayout::kGptj),
                         FusedArgs(DType::kBFloat16, 10, 4, 4, 128))
             .value();
  EXPECT_FALSE(plan.vectorized);
  EXPECT_EQ(plan.block_x, 10u);
}

TEST(PlanTest, PartialRotaryAndOddSizesUseTheGenericVectorKernel) {
  const LaunchPlan plan = PlanMropeLaunch(MakeSpec(80, 80, RotaryLayout::kNeox),
                                          FusedArgs(DType::kBFloat16, 3, 2, 2, 80))
                              .value();
  EXPECT_TRUE(plan.vectorized);
  EXPECT_EQ(plan.specialized_rotary_dim, 0);
  EXPECT_EQ(plan.block_x, 5u);
  const LaunchPlan partial = PlanMropeLaunch(MakeSpec(128, 64, RotaryLayout::kNeox),
                                             FusedArgs(DType::kFloat32, 3, 2, 2, 128))
                                 .value();
  EXPECT_TRUE(partial.vectorized);
  EXPECT_EQ(partial.specialized_rotary_dim, 64);
  EXPECT_EQ(partial.block_x, 8u);  // 32 pairs / 4 fp32 per access
}

TEST(PlanTest, TableSetsThePositionLimit) {
  RotarySpec spec = MakeSpec(128, 128, RotaryLayout::kNeox);
  MropeKernelArgs args = FusedArgs(DType::kBFloat16, 10, 4, 4, 128);
  args.table = {static_cast<const float*>(At(kTable)),
                static_cast<const float*>(At(kTable + 4 * 64)), 4096, 128};
  const LaunchPlan plan = PlanMropeLaunch(spec, args).value();
  EXPECT_EQ(plan.params.rotary.position_limit, 4096);
  EXPECT_EQ(plan.params.rotary.table_row_stride, 128);
}

TEST(PlanTest, NoTokensMeansNoLaunch) {
  const LaunchPlan plan = PlanMropeLaunch(MakeSpec(128, 128, RotaryLayout::kNeox),
                                          FusedArgs(DType::kBFloat16, 0, 4, 4, 128))
                              .value();
  EXPECT_EQ(plan.grid_x, 0u);
}

}  // namespace
}  // namespace mrope
