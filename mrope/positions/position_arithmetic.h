#ifndef MROPE_POSITIONS_POSITION_ARITHMETIC_H_
#define MROPE_POSITIONS_POSITION_ARITHMETIC_H_

namespace mrope {

// One addition of two positions under a family's arithmetic: exact for integer families
// (doubles hold every int64 position below 2^53), rounded to float32 for Qwen3-Omni, whose HF
// code adds float32 tensors one operation at a time.
inline double AddPositions(bool float_positions, double a, double b) {
  if (float_positions) return static_cast<float>(a) + static_cast<float>(b);
  return a + b;
}

}  // namespace mrope

#endif  // MROPE_POSITIONS_POSITION_ARITHMETIC_H_
