#ifndef MROPE_ROTARY_DTYPE_STORAGE_H_
#define MROPE_ROTARY_DTYPE_STORAGE_H_

// Host conversions between float32 values and their stored bytes in a DType
// (mrope/rotary/tensor_view.h), one element or a whole buffer at a time. Storing rounds once,
// as FloatToBFloat16 / FloatToHalf (half_float.h) and FloatToFp8E4m3 (fp8_e4m3.h: unscaled,
// saturating to +-448) define it; float32 is stored as is. Loading is exact.

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {

// Writes `value` as one `dtype` element: ElementSize(dtype) bytes at `out`, any alignment.
void StoreAs(DType dtype, float value, void* out);

// The `dtype` element at `in` (any alignment) as float32.
float LoadAs(DType dtype, const void* in);

// `values` stored as consecutive `dtype` elements.
std::vector<uint8_t> StoreAllAs(DType dtype, absl::Span<const float> values);

// The consecutive `dtype` elements of `bytes` as float32 (a trailing partial element is
// ignored).
std::vector<float> LoadAllAs(DType dtype, absl::Span<const uint8_t> bytes);

}  // namespace mrope

#endif  // MROPE_ROTARY_DTYPE_STORAGE_H_
