#ifndef MROPE_KERNELS_INTERNAL_FUSED_LAUNCH_PLAN_H_
#define MROPE_KERNELS_INTERNAL_FUSED_LAUNCH_PLAN_H_

// Internal to kernels/: validated fused-kernel arguments -> FusedLaunchPlan (block and grid
// shape, vector path, by-value parameters). Host-only, unit-tested without a GPU.

#include "absl/status/statusor.h"
#include "kernels/fused_kernel_args.h"
#include "kernels/internal/fused_params.h"
#include "kernels/launch_plan.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {
namespace kernel_internal {

// Validates (ValidateFusedMropeArgs) and plans the launch.
absl::StatusOr<FusedLaunchPlan> PlanFusedLaunch(const RotarySpec& spec,
                                                const FusedMropeArgs& args,
                                                const PlanOptions& options = {});

}  // namespace kernel_internal
}  // namespace mrope

#endif  // MROPE_KERNELS_INTERNAL_FUSED_LAUNCH_PLAN_H_
