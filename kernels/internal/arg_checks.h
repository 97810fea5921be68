#ifndef MROPE_KERNELS_INTERNAL_ARG_CHECKS_H_
#define MROPE_KERNELS_INTERNAL_ARG_CHECKS_H_

// Internal to kernels/: the argument checks both kernels' validations share. Each returns
// InvalidArgument naming the field and its value.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "kernels/mrope_kernel_args.h"
#include "mrope/rotary/rotary_spec.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace kernel_internal {

std::string Hex(const void* p);

// *out = a * b + c, or false on int64 overflow.
bool MulAdd(int64_t a, int64_t b, int64_t c, int64_t* out);

bool Aligned(const void* p, int64_t bytes);

// fp32, bf16 or fp16: the dtypes the kernels read.
bool IsStorageDType(DType dtype);

// head_dim, rotary_dim, layout, axis map; with uses_inv_freq also inv_freq, sincos_math and
// attention_scaling.
absl::Status ValidateSpec(const RotarySpec& spec, bool uses_inv_freq);

// One strided [T][H][D] view named `name`: non-null, a storage dtype (or fp8 e4m3 for an
// output that allows it), aligned, head_dim, non-negative strides, extents that fit 64 bits,
// rows that do not overlap.
absl::Status ValidateHeads(const HeadsView& v, const char* name, int head_dim,
                           bool fp8_allowed = false);

// q and k as ValidateHeads checks them, with one dtype, one num_tokens and num_heads summing
// within int32.
absl::Status ValidateQk(const HeadsView& q, const HeadsView& k, int head_dim);

// The direction, the spec (inv_freq only without a table), the table if any, and exactly one
// position source for num_tokens tokens.
absl::Status ValidateRotarySources(const RotarySpec& spec, const PositionsView& positions,
                                   const SequenceDeltaPositions& sequence_delta,
                                   const DeviceCosSinTable& table, RotationDirection direction,
                                   int64_t num_tokens);

absl::Status ValidateErrorFlag(const int* error_flag);

}  // namespace kernel_internal
}  // namespace mrope

#endif  // MROPE_KERNELS_INTERNAL_ARG_CHECKS_H_
