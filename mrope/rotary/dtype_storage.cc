#include "mrope/rotary/dtype_storage.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/types/span.h"
#include "mrope/rotary/fp8_e4m3.h"
#include "mrope/rotary/half_float.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace {

template <typename Bits>
void StoreBits(Bits bits, void* out) {
  std::memcpy(out, &bits, sizeof(bits));
}

template <typename Bits>
Bits LoadBits(const void* in) {
  Bits bits;
  std::memcpy(&bits, in, sizeof(bits));
  return bits;
}

}  // namespace

void StoreAs(DType dtype, float value, void* out) {
  switch (dtype) {
    case DType::kBFloat16:
      StoreBits(FloatToBFloat16(value), out);
      return;
    case DType::kFloat16:
      StoreBits(FloatToHalf(value), out);
      return;
    case DType::kFloat8E4m3:
      StoreBits(FloatToFp8E4m3(value), out);
      return;
    case DType::kFloat32:
      StoreBits(value, out);
      return;
  }
}

float LoadAs(DType dtype, const void* in) {
  switch (dtype) {
    case DType::kBFloat16:
      return BFloat16ToFloat(LoadBits<uint16_t>(in));
    case DType::kFloat16:
      return HalfToFloat(LoadBits<uint16_t>(in));
    case DType::kFloat8E4m3:
      return Fp8E4m3ToFloat(LoadBits<uint8_t>(in));
    case DType::kFloat32:
      break;
  }
  return LoadBits<float>(in);
}

std::vector<uint8_t> StoreAllAs(DType dtype, absl::Span<const float> values) {
  const size_t size = ElementSize(dtype);
  std::vector<uint8_t> bytes(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) StoreAs(dtype, values[i], &bytes[i * size]);
  return bytes;
}

std::vector<float> LoadAllAs(DType dtype, absl::Span<const uint8_t> bytes) {
  const size_t size = ElementSize(dtype);
  std::vector<float> values(bytes.size() / size);
  for (size_t i = 0; i < values.size(); ++i) values[i] = LoadAs(dtype, &bytes[i * size]);
  return values;
}

}  // namespace mrope
