#include "kernels/mrope_kernel_validate.h"

#include "absl/status/status.h"
#include "kernels/internal/arg_checks.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/heads_overlap.h"

namespace mrope {

absl::Status ValidateMropeKernelArgs(const RotarySpec& spec, const MropeKernelArgs& args) {
  MROPE_RETURN_IF_ERROR(kernel_internal::ValidateRotarySources(
      spec, args.positions, args.sequence_delta, args.table, args.direction, args.q.num_tokens));
  MROPE_RETURN_IF_ERROR(kernel_internal::ValidateQk(args.q, args.k, spec.head_dim));
  if (args.q.num_tokens > 0) {
    MROPE_RETURN_IF_ERROR(ValidateDisjointHeads(args.q, args.k));
  }
  return kernel_internal::ValidateErrorFlag(args.error_flag);
}

}  // namespace mrope
