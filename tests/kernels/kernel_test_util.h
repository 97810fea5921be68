#ifndef MROPE_TESTS_KERNELS_KERNEL_TEST_UTIL_H_
#define MROPE_TESTS_KERNELS_KERNEL_TEST_UTIL_H_

// Helpers of the kernel tests (mrope_kernel_test.cc, fused_kernel_test.cc), on a GPU or on the
// host execution harness.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/gpu_util.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {

// True when MROPE_REQUIRE_GPU=1: a GPU check must not pass by skipping.
bool GpuRequired();

// Skips the test without a CUDA device, or fails it when GpuRequired().
#define MROPE_SKIP_WITHOUT_GPU()                                                     \
  if (std::string no_device; gpu_util::DeviceCount(&no_device) == 0) {             \
    if (GpuRequired()) FAIL() << "MROPE_REQUIRE_GPU=1 but " << no_device;          \
    GTEST_SKIP() << "no CUDA device on this machine: " << no_device;               \
  }

const char* DTypeName(DType dtype);

// Planar [3][T] positions of an image/video prompt: a text prefix (t = h = w = i), then video
// tokens t = base + 50 * frame, h = base + row, w = base + col with a large base, so that the
// three axes differ (text-only positions would hide axis-map and layout bugs).
std::vector<int64_t> VideoPositions(int64_t num_tokens, int64_t max_base, std::mt19937& rng);

// Planar [num_axes][T] positions (num_axes >= 3): VideoPositions' three rows, then rows that
// differ from all of them (an XD-RoPE axis beyond w: row a is row a % 3 shifted by 1000 a plus
// a token-dependent step), so that a kernel reading the wrong axis fails.
std::vector<int64_t> AxisPositions(int num_axes, int64_t num_tokens, int64_t max_base,
                                   std::mt19937& rng);

// `elements` random values in [-2, 2) stored as `dtype`.
std::vector<uint8_t> RandomStorage(DType dtype, int64_t elements, std::mt19937& rng);

gpu_util::DeviceBuffer UploadPositions(const std::vector<int64_t>& positions, bool as_int32);

int ReadFlag(const gpu_util::DeviceBuffer& flag);

}  // namespace mrope

#endif  // MROPE_TESTS_KERNELS_KERNEL_TEST_UTIL_H_
