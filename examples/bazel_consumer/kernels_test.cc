// The CUDA kernels' host API through @mrope//kernels:mrope_kernel and @mrope//kernels:fused_kernel
// (nvcc-compiled device code linked in). These calls never reach a GPU: invalid arguments are
// refused before any launch, and zero tokens launch nothing, so they run on machines without one.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/fused_kernel.h"
#include "kernels/mrope_kernel.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/service/model_spec.h"

namespace {

using ::testing::HasSubstr;

// Qwen2-VL's rotary spec (head_dim 128) and host buffers shaped for it. The pointers are
// only validated, never dereferenced: nothing is launched.
class KernelsFromAnotherWorkspace : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<mrope::ModelSpec> model = mrope::PresetModelSpec("qwen2_vl");
    ASSERT_TRUE(model.ok()) << model.status();
    absl::StatusOr<mrope::RotarySpec> rotary =
        mrope::BuildRotarySpec(*model->rope, mrope::RotaryLayoutOf(*model), /*seq_len=*/16);
    ASSERT_TRUE(rotary.ok()) << rotary.status();
    spec_ = *rotary;
  }

  // q [0][2][D] and k [0][1][D] in fp32, planar positions [3][0].
  mrope::MropeKernelArgs ZeroTokenArgs() {
    const int32_t d = spec_.head_dim;
    mrope::MropeKernelArgs args;
    args.q = {q_.data(), mrope::DType::kFloat32, 0, 2, d, 2 * d, d};
    args.k = {k_.data(), mrope::DType::kFloat32, 0, 1, d, d, d};
    args.positions = {positions_.data(), /*is_int64=*/true, 0, /*axis_stride=*/0};
    args.error_flag = &error_flag_;
    return args;
  }

  mrope::RotarySpec spec_;
  std::vector<float> q_ = std::vector<float>(256);
  std::vector<float> k_ = std::vector<float>(128);
  std::vector<float> v_ = std::vector<float>(128);
  std::vector<float> k_out_ = std::vector<float>(128);
  std::vector<int64_t> positions_ = std::vector<int64_t>(3);
  int error_flag_ = 0;
};

TEST_F(KernelsFromAnotherWorkspace, ZeroTokensLaunchNothing) {
  EXPECT_TRUE(mrope::LaunchMropeKernel(spec_, ZeroTokenArgs(), /*stream=*/nullptr).ok());
}

TEST_F(KernelsFromAnotherWorkspace, MropeKernelRefusesAWrongHeadDim) {
  mrope::MropeKernelArgs args = ZeroTokenArgs();
  args.q.head_dim = 64;
  const absl::Status status = mrope::LaunchMropeKernel(spec_, args, /*stream=*/nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("q.head_dim=64 differs from spec.head_dim=",
                                                       spec_.head_dim)));
}

TEST_F(KernelsFromAnotherWorkspace, FusedKernelNeedsSomewhereToWriteK) {
  const mrope::MropeKernelArgs rotary = ZeroTokenArgs();
  mrope::FusedMropeArgs args;
  args.q = rotary.q;
  args.k = rotary.k;
  args.v = {v_.data(), mrope::DType::kFloat32, 0, 1, spec_.head_dim, spec_.head_dim,
            spec_.head_dim};
  args.positions = rotary.positions;
  args.error_flag = rotary.error_flag;
  const absl::Status status = mrope::LaunchFusedMropeKernel(spec_, args, /*stream=*/nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("neither slot_mapping nor k_out is set"));

  args.k_out = {k_out_.data(), mrope::DType::kFloat32, 0, 1, spec_.head_dim, spec_.head_dim,
                spec_.head_dim};
  EXPECT_TRUE(mrope::LaunchFusedMropeKernel(spec_, args, /*stream=*/nullptr).ok());
}

}  // namespace
