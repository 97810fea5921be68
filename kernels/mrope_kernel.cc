#include "kernels/mrope_kernel.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/kernel_params.h"
#include "kernels/launch_plan.h"
#include "mrope/common/status_macros.h"

namespace mrope {

absl::Status LaunchMropeKernel(const RotarySpec& spec, const MropeKernelArgs& args,
                               GpuStream stream) {
  MROPE_ASSIGN_OR_RETURN(const kernel_internal::LaunchPlan plan,
                         kernel_internal::PlanMropeLaunch(spec, args));
  if (plan.grid_x == 0) return absl::OkStatus();
  const kernel_internal::EnqueueResult result = kernel_internal::EnqueueMropeKernel(plan, stream);
  if (result.cuda_error != 0) {
    return absl::InternalError(absl::StrCat("M-RoPE kernel launch failed: cudaError ",
                                            result.cuda_error, " (", result.message, ")"));
  }
  return absl::OkStatus();
}

}  // namespace mrope
