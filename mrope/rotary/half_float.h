#ifndef MROPE_ROTARY_HALF_FLOAT_H_
#define MROPE_ROTARY_HALF_FLOAT_H_

// Host conversions between float32 and the 16-bit storage formats of q/k (bfloat16, IEEE
// binary16). Narrowing rounds to nearest, ties to even; overflow gives infinity; NaN stays a
// (quiet) NaN with its sign. Widening is exact. No CUDA headers involved.

#include <cstdint>

namespace mrope {

float BFloat16ToFloat(uint16_t bits);
uint16_t FloatToBFloat16(float value);

float HalfToFloat(uint16_t bits);
uint16_t FloatToHalf(float value);

}  // namespace mrope

#endif  // MROPE_ROTARY_HALF_FLOAT_H_
