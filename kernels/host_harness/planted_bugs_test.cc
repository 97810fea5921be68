// The host execution harness must be able to fail: each test plants one bug in a tiny kernel
// (compiled as host C++ with cuda_host_prelude.h, like the real kernel) and expects the harness
// or the sanitizer of this build variant to report it. A clean kernel runs as a control.

#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/kernel_launch.cuh"

namespace mrope_host {
namespace {

using ::mrope::kernel_internal::LaunchKernel;

constexpr int kThreads = 64;

struct Args {
  uint32_t* out = nullptr;
};

// At namespace scope, as in the real kernel (see cuda_host_prelude.h).
__shared__ uint32_t s_value[kThreads];

// Thread i hands a value to thread i + 1 through shared memory, with or without a barrier.
template <bool kBarrier>
__global__ void __launch_bounds__(kThreads) HandOff(const __grid_constant__ Args args) {
  s_value[threadIdx.x] = threadIdx.x * 10;
  if (kBarrier) __syncthreads();
  args.out[threadIdx.x] = s_value[(threadIdx.x + 1) % kThreads];
}

std::vector<uint32_t> RunHandOff(void (*kernel)(Args)) {
  std::vector<uint32_t> out(kThreads, 0);
  EXPECT_EQ(LaunchKernel<kThreads>(kernel, dim3(3), dim3(kThreads), nullptr, Args{out.data()}),
            cudaSuccess);
  return out;
}

class PlantedBugsTest : public ::testing::Test {
 protected:
  void SetUp() override { SetOptions({Order::kForward, 1}); }
};

TEST_F(PlantedBugsTest, CleanHandOffIsExact) {
  const std::vector<uint32_t> out = RunHandOff(&HandOff<true>);
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(out[i], ((i + 1) % kThreads) * 10u) << i;
}

#if !defined(__SANITIZE_THREAD__)  // there: MissingBarrierIsReportedAsARace
// Without the barrier, thread 0 (run first) reads thread 1's slot before it is written: the
// 0xFF poison of shared memory shows in the result.
TEST_F(PlantedBugsTest, MissingBarrierReadsPoisonedSharedMemory) {
  const std::vector<uint32_t> out = RunHandOff(&HandOff<false>);
  EXPECT_EQ(out[0], 0xFFFFFFFFu);
}
#endif

__global__ void __launch_bounds__(kThreads) ExitBeforeBarrier(const __grid_constant__ Args) {
  if (threadIdx.x == 5) return;
  __syncthreads();
}

__global__ void __launch_bounds__(kThreads) TwoBarrierSites(const __grid_constant__ Args) {
  if (threadIdx.x % 2 == 0) {
    __syncthreads();
  } else {
    __syncthreads();
  }
}

TEST_F(PlantedBugsTest, BarrierDivergenceIsFatal) {
  EXPECT_DEATH(LaunchKernel<kThreads>(&ExitBeforeBarrier, dim3(1), dim3(kThreads), nullptr,
                                      Args{}),
               "barrier divergence.*thread \\(5,0,0\\) has exited");
  EXPECT_DEATH(
      LaunchKernel<kThreads>(&TwoBarrierSites, dim3(1), dim3(kThreads), nullptr, Args{}),
      "barrier divergence.*waits at .*planted_bugs_test.cc:[0-9]+, thread .* at "
      ".*planted_bugs_test.cc:[0-9]+");
}

__global__ void __launch_bounds__(kThreads) Nothing(const __grid_constant__ Args) {}

TEST_F(PlantedBugsTest, LaunchesAGpuWouldRefuseAreRefused) {
  EXPECT_EQ(LaunchKernel<kThreads>(&Nothing, dim3(1), dim3(kThreads + 1), nullptr, Args{}),
            cudaErrorInvalidConfiguration);  // above __launch_bounds__
  EXPECT_EQ(LaunchKernel<kThreads>(&Nothing, dim3(1, 65536), dim3(1), nullptr, Args{}),
            cudaErrorInvalidConfiguration);  // gridDim.y
  EXPECT_EQ(LaunchKernel<kThreads>(&Nothing, dim3(1), dim3(1, 1, 65), nullptr, Args{}),
            cudaErrorInvalidConfiguration);  // blockDim.z
  EXPECT_EQ(LaunchKernel<kThreads>(&Nothing, dim3(0), dim3(1), nullptr, Args{}),
            cudaErrorInvalidConfiguration);
}

// 16-byte accesses one element off their alignment.
__global__ void __launch_bounds__(kThreads) MisalignedStore(const __grid_constant__ Args args) {
  __stwb(reinterpret_cast<uint4*>(args.out + 1), make_uint4(1, 2, 3, 4));
}

__global__ void __launch_bounds__(kThreads) MisalignedLoad(const __grid_constant__ Args args) {
  const uint4 v = *reinterpret_cast<const uint4*>(args.out + 1);
  args.out[0] = v.x;
}

TEST_F(PlantedBugsTest, MisalignedVectorAccessIsFatal) {
  alignas(16) uint32_t buffer[8] = {};
  EXPECT_DEATH(
      LaunchKernel<kThreads>(&MisalignedStore, dim3(1), dim3(1), nullptr, Args{buffer}),
      "misaligned 16-byte store");
  EXPECT_DEATH(LaunchKernel<kThreads>(&MisalignedLoad, dim3(1), dim3(1), nullptr, Args{buffer}),
               "misaligned address");
}

#if defined(__SANITIZE_THREAD__)
// Every thread of the block increments one element with no barrier or atomic.
__global__ void __launch_bounds__(kThreads) RacyIncrement(const __grid_constant__ Args args) {
  args.out[0] += 1;
}

TEST_F(PlantedBugsTest, RaceBetweenThreadsOfABlockIsReported) {
  std::vector<uint32_t> out(1, 0);
  EXPECT_DEATH(
      LaunchKernel<kThreads>(&RacyIncrement, dim3(1), dim3(kThreads), nullptr, Args{out.data()}),
      "ThreadSanitizer: data race");
}

TEST_F(PlantedBugsTest, MissingBarrierIsReportedAsARace) {
  EXPECT_DEATH(RunHandOff(&HandOff<false>), "ThreadSanitizer: data race");
}

TEST_F(PlantedBugsTest, BarrierOrdersTheHandOff) {
  // The control: no report with the barrier (a death here would fail the test).
  RunHandOff(&HandOff<true>);
}
#endif

#if defined(__SANITIZE_ADDRESS__)
__global__ void __launch_bounds__(kThreads) WriteOnePastTheEnd(const __grid_constant__ Args args) {
  args.out[threadIdx.x + 1] = 7;
}

TEST_F(PlantedBugsTest, OutOfBoundsWriteIsReported) {
  // Exact-size heap buffer, as the harness's device buffers are.
  std::vector<uint32_t> out(kThreads);
  EXPECT_DEATH(LaunchKernel<kThreads>(&WriteOnePastTheEnd, dim3(1), dim3(kThreads), nullptr,
                                      Args{out.data()}),
               "heap-buffer-overflow");
}
#endif

}  // namespace
}  // namespace mrope_host

extern "C" const char* __tsan_default_options() { return "halt_on_error=1"; }
