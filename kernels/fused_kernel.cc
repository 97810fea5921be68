#include "kernels/fused_kernel.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/internal/fused_launch_plan.h"
#include "kernels/internal/fused_params.h"
#include "mrope/common/status_macros.h"

namespace mrope {

absl::Status LaunchFusedMropeKernel(const RotarySpec& spec, const FusedMropeArgs& args,
                                    GpuStream stream) {
  MROPE_ASSIGN_OR_RETURN(const kernel_internal::FusedLaunchPlan plan,
                         kernel_internal::PlanFusedLaunch(spec, args));
  if (plan.grid_x == 0) return absl::OkStatus();
  const kernel_internal::EnqueueResult result = kernel_internal::EnqueueFusedKernel(plan, stream);
  if (result.cuda_error != 0) {
    return absl::InternalError(absl::StrCat("fused M-RoPE kernel launch failed: cudaError ",
                                            result.cuda_error, " (", result.message, ")"));
  }
  return absl::OkStatus();
}

}  // namespace mrope
