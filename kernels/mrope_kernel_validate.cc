#include "kernels/mrope_kernel_validate.h"

#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/internal/arg_checks.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/heads_overlap.h"

namespace mrope {

absl::Status ValidateMropeKernelArgs(const RotarySpec& spec, const MropeKernelArgs& args) {
  using kernel_internal::ValidateHeads;
  MROPE_RETURN_IF_ERROR(kernel_internal::ValidateRotarySources(
      spec, args.positions, args.sequence_delta, args.table, args.q.num_tokens));
  MROPE_RETURN_IF_ERROR(ValidateHeads(args.q, "q", spec.head_dim));
  MROPE_RETURN_IF_ERROR(ValidateHeads(args.k, "k", spec.head_dim));
  if (args.q.dtype != args.k.dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat("q.dtype=", static_cast<int>(args.q.dtype),
                     " differs from k.dtype=", static_cast<int>(args.k.dtype)));
  }
  if (args.q.num_tokens != args.k.num_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "q.num_tokens=", args.q.num_tokens, " differs from k.num_tokens=", args.k.num_tokens));
  }
  if (int64_t{args.q.num_heads} + args.k.num_heads > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "q.num_heads=", args.q.num_heads, " + k.num_heads=", args.k.num_heads, " overflows int32"));
  }
  if (args.q.num_tokens > 0) {
    MROPE_RETURN_IF_ERROR(ValidateDisjointHeads(args.q, args.k));
  }
  return kernel_internal::ValidateErrorFlag(args.error_flag);
}

}  // namespace mrope
