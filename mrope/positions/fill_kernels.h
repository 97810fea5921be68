#ifndef MROPE_POSITIONS_FILL_KERNELS_H_
#define MROPE_POSITIONS_FILL_KERNELS_H_

// The stores under every position writer: constant and counting runs of one plane, and the h
// and w planes of grid frames. Written in blocks the compiler vectorises, each kernel built for
// AVX-512, AVX2 and the default target (cpu_clones.h). Values are the callers' to keep in range.

#include <cstdint>

namespace mrope {

// out[i] = value for i in [0, n).
void FillConstant(int64_t* out, int64_t n, int64_t value);
void FillConstant(int32_t* out, int64_t n, int32_t value);
void FillConstant(float* out, int64_t n, float value);

// out[i] = first + i (no overflow: the caller checked first + n - 1 fits the type).
void FillCounting(int64_t* out, int64_t n, int64_t first);
void FillCounting(int32_t* out, int64_t n, int32_t first);
// out[i] = float(first + i): integer positions in float32 output, each rounded once.
void FillCounting(float* out, int64_t n, int64_t first);
// out[i] = base + float(offset + i) in float32: one rounding each (Qwen3-Omni's arithmetic).
void FillCountingFloat32(float* out, int64_t n, float base, int64_t offset);

// The h and w planes of `rows` whole rows of a grid frame, `width` tokens each:
// h[r * width + c] = value(first_row + r) and w[r * width + c] = value(c), where value(x) is
// base + x computed as FillCounting computes it (the float overload: float(base + x)), or as
// FillCountingFloat32 does for FillGridRowsFloat32 (base + float(x)). One call per frame, both
// planes per row: rows are often 16-22 tokens, where a call (or a loop) per row and plane cost
// more than its stores.
void FillGridRows(int64_t* h, int64_t* w, int64_t rows, int64_t width, int64_t first_row,
                  int64_t base);
void FillGridRows(int32_t* h, int32_t* w, int64_t rows, int64_t width, int64_t first_row,
                  int32_t base);
void FillGridRows(float* h, float* w, int64_t rows, int64_t width, int64_t first_row,
                  int64_t base);
void FillGridRowsFloat32(float* h, float* w, int64_t rows, int64_t width, int64_t first_row,
                         float base);

}  // namespace mrope

#endif  // MROPE_POSITIONS_FILL_KERNELS_H_
