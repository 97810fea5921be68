#ifndef MROPE_KERNELS_FUSED_REFERENCE_H_
#define MROPE_KERNELS_FUSED_REFERENCE_H_

// The CPU reference of the fused kernel's whole chain (kernels/fused_kernel.h): the same
// arguments, in host memory, the same results bit for bit (mrope/rotary/qk_norm_math.h,
// rope_math.h and fp8_e4m3.h hold every number both compute). Plain C++, compiled with
// -ffp-contract=off.

#include "absl/status/status.h"
#include "kernels/fused_kernel_args.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {

// Runs the chain on `args` whose pointers all point to host memory: validates exactly as
// ValidateFusedMropeArgs, then, token by token, does what the kernel does, including the
// device-side errors (a bad position, sequence id or slot ORs its kMropeError* bit into
// *args.error_flag and skips the token).
absl::Status ApplyFusedReference(const RotarySpec& spec, const FusedMropeArgs& args);

}  // namespace mrope

#endif  // MROPE_KERNELS_FUSED_REFERENCE_H_
