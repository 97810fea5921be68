#ifndef MROPE_KERNELS_FUSED_REFERENCE_CASE_H_
#define MROPE_KERNELS_FUSED_REFERENCE_CASE_H_

// The fused chain's CPU reference (fused_reference.h) on an attention-input golden case
// (mrope/rotary/attention_case.h), as `mrope rotary --golden` and the accuracy test run it.

#include <vector>

#include "absl/status/statusor.h"
#include "mrope/rotary/attention_case.h"

namespace mrope {

// q_out [T][Hq][D] and k_out [T][Hk][D] of the chain (per-head RMSNorm, M-RoPE, rounded once
// to the case's dtype), as float32. q is read from a [T][Hq][2D] buffer whose second half of
// each head is NaN (Qwen3.5's gate; a read of it would show); both outputs are written out of
// place, no cache.
struct FusedCaseOutput {
  std::vector<float> q_out;
  std::vector<float> k_out;
};
absl::StatusOr<FusedCaseOutput> RunFusedReference(const AttentionCase& c);

}  // namespace mrope

#endif  // MROPE_KERNELS_FUSED_REFERENCE_CASE_H_
