#include "tests/kernels/kernel_test_util.h"

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kernels/gpu_util.h"
#include "mrope/rotary/dtype_storage.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {

using gpu_util::DeviceBuffer;

bool GpuRequired() {
  const char* required = std::getenv("MROPE_REQUIRE_GPU");
  return required != nullptr && std::string(required) == "1";
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "fp32";
    case DType::kBFloat16:
      return "bf16";
    case DType::kFloat16:
      return "fp16";
    case DType::kFloat8E4m3:
      return "fp8";
  }
  return "?";
}

std::vector<int64_t> VideoPositions(int64_t num_tokens, int64_t max_base, std::mt19937& rng) {
  std::vector<int64_t> positions(kNumAxes * num_tokens);
  const int64_t text = num_tokens / 5;
  const int64_t base = text + static_cast<int64_t>(rng() % static_cast<uint32_t>(max_base));
  constexpr int64_t kRows = 5;
  constexpr int64_t kCols = 8;
  for (int64_t i = 0; i < num_tokens; ++i) {
    int64_t t = i, h = i, w = i;
    if (i >= text) {
      const int64_t g = i - text + 13;  // starts mid-frame: t, h, w differ from the first token
      t = base + 50 * (g / (kRows * kCols));
      h = base + (g / kCols) % kRows;
      w = base + g % kCols;
    }
    positions[i] = t;
    positions[num_tokens + i] = h;
    positions[2 * num_tokens + i] = w;
  }
  return positions;
}

std::vector<int64_t> AxisPositions(int num_axes, int64_t num_tokens, int64_t max_base,
                                   std::mt19937& rng) {
  std::vector<int64_t> positions = VideoPositions(num_tokens, max_base, rng);
  positions.resize(num_axes * num_tokens);
  for (int axis = kNumAxes; axis < num_axes; ++axis) {
    for (int64_t i = 0; i < num_tokens; ++i) {
      positions[axis * num_tokens + i] =
          positions[(axis % kNumAxes) * num_tokens + i] + 1000 * axis + i % 7;
    }
  }
  return positions;
}

std::vector<uint8_t> RandomStorage(DType dtype, int64_t elements, std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<float> values(elements);
  for (float& v : values) v = value(rng);
  return StoreAllAs(dtype, values);
}

DeviceBuffer UploadPositions(const std::vector<int64_t>& positions, bool as_int32) {
  if (!as_int32) {
    DeviceBuffer buffer(positions.size() * sizeof(int64_t));
    buffer.Upload(positions.data(), positions.size() * sizeof(int64_t));
    return buffer;
  }
  const std::vector<int32_t> narrow(positions.begin(), positions.end());
  DeviceBuffer buffer(narrow.size() * sizeof(int32_t));
  buffer.Upload(narrow.data(), narrow.size() * sizeof(int32_t));
  return buffer;
}

int ReadFlag(const DeviceBuffer& flag) {
  int value = -1;
  flag.Download(&value, sizeof(value));
  return value;
}

}  // namespace mrope
