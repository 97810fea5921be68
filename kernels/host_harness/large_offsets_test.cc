// Element offsets above 2^31: q and k as views of a fused buffer whose token stride is
// 2^31 + 256 elements (a fused qkv far larger than any GPU holds), on sparse host mappings
// whose untouched pages cost nothing. Any 32-bit truncation of an offset in the kernel
// addresses the wrong row (or unmapped memory) and fails here. Runs on the host execution
// harness only.

#include <sys/mman.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "kernels/mrope_kernel.h"
#include "mrope/rotary/apply.h"
#include "mrope/rotary/axis_map.h"
#include "mrope/rotary/half_float.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {
namespace {

constexpr int64_t kTokens = 3;
constexpr int32_t kHq = 2;
constexpr int32_t kHk = 1;
constexpr int32_t kHeadDim = 128;
constexpr int64_t kTokenStride = (int64_t{1} << 31) + 256;  // elements
constexpr int64_t kElements = (kTokens - 1) * kTokenStride + (kHq + kHk) * kHeadDim;

// A bf16 buffer of kElements elements that only commits the pages written.
class SparseBuffer {
 public:
  SparseBuffer() {
    data_ = mmap(nullptr, Bytes(), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  }
  ~SparseBuffer() {
    if (data_ != MAP_FAILED) munmap(data_, Bytes());
  }
  bool ok() const { return data_ != MAP_FAILED; }
  uint16_t* Row(int64_t token) { return static_cast<uint16_t*>(data_) + token * kTokenStride; }
  HeadsView Q() { return {data_, DType::kBFloat16, kTokens, kHq, kHeadDim, kTokenStride, kHeadDim}; }
  HeadsView K() {
    return {Row(0) + kHq * kHeadDim, DType::kBFloat16, kTokens, kHk, kHeadDim, kTokenStride,
            kHeadDim};
  }

 private:
  static size_t Bytes() { return static_cast<size_t>(kElements) * sizeof(uint16_t); }
  void* data_ = MAP_FAILED;
};

TEST(LargeOffsetsTest, TokenStrideAbove2To31) {
  SparseBuffer expected;
  SparseBuffer actual;
  ASSERT_TRUE(expected.ok() && actual.ok());
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  constexpr int kRowElements = (kHq + kHk) * kHeadDim;
  for (int64_t t = 0; t < kTokens; ++t) {
    for (int i = 0; i < kRowElements; ++i) {
      expected.Row(t)[i] = actual.Row(t)[i] = FloatToBFloat16(value(rng));
    }
  }
  RotarySpec spec;
  spec.head_dim = kHeadDim;
  spec.rotary_dim = kHeadDim;
  spec.axis_map = BlockedAxisMap({16, 24, 24}, kHeadDim / 2).value();
  for (int j = 0; j < kHeadDim / 2; ++j) {
    spec.inv_freq.push_back(static_cast<float>(std::pow(1e6, -2.0 * j / kHeadDim)));
  }
  const std::vector<int64_t> positions = {5, 900, 70000, 5, 901, 80000, 5, 902, 90000};
  const PositionsView view{positions.data(), true, kTokens, kTokens};
  ASSERT_TRUE(ApplyMropeReference(spec, view, expected.Q(), expected.K()).ok());

  int error_flag = 0;
  MropeKernelArgs args;
  args.q = actual.Q();
  args.k = actual.K();
  args.positions = view;
  args.error_flag = &error_flag;
  const absl::Status status = LaunchMropeKernel(spec, args, nullptr);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(error_flag, 0);
  for (int64_t t = 0; t < kTokens; ++t) {
    EXPECT_EQ(std::memcmp(expected.Row(t), actual.Row(t), kRowElements * sizeof(uint16_t)), 0)
        << "token " << t;
  }
}

}  // namespace
}  // namespace mrope
