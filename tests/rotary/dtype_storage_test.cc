// StoreAs / LoadAs (mrope/rotary/dtype_storage.h): the stored bytes (little-endian) and the
// value read back, for every DType, including the rounding and saturation the conversions
// define (half_float.h, fp8_e4m3.h).

#include "mrope/rotary/dtype_storage.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

struct StorageCase {
  DType dtype;
  float value;
  std::vector<uint8_t> bytes;  // little-endian
  float loaded;                // LoadAs of those bytes
};

std::vector<StorageCase> Cases() {
  return {
      // float32: the bits as they are.
      {DType::kFloat32, 1.0f, {0x00, 0x00, 0x80, 0x3F}, 1.0f},
      {DType::kFloat32, -0.0f, {0x00, 0x00, 0x00, 0x80}, -0.0f},
      {DType::kFloat32, 1.00000012f, {0x01, 0x00, 0x80, 0x3F}, 1.00000012f},
      {DType::kFloat32, 1e-45f, {0x01, 0x00, 0x00, 0x00}, 1e-45f},  // smallest subnormal
      // bfloat16: 8 significant bits, round to nearest, ties to even.
      {DType::kBFloat16, 1.0f, {0x80, 0x3F}, 1.0f},
      {DType::kBFloat16, -2.5f, {0x20, 0xC0}, -2.5f},
      {DType::kBFloat16, 1.00390625f, {0x80, 0x3F}, 1.0f},        // 1 + 2^-8: tie, to even
      {DType::kBFloat16, 1.01171875f, {0x82, 0x3F}, 1.015625f},   // 1 + 3 * 2^-8: tie, to even
      {DType::kBFloat16, 1.00390637f, {0x81, 0x3F}, 1.0078125f},  // just above the tie
      {DType::kBFloat16, 3.4028235e38f, {0x80, 0x7F}, kInf},      // float max overflows
      // float16: 11 significant bits, max 65504, subnormals down to 2^-24.
      {DType::kFloat16, 1.0f, {0x00, 0x3C}, 1.0f},
      {DType::kFloat16, -0.5f, {0x00, 0xB8}, -0.5f},
      {DType::kFloat16, 1.00048828f, {0x00, 0x3C}, 1.0f},            // 1 + 2^-11: tie, to even
      {DType::kFloat16, 1.00146484f, {0x02, 0x3C}, 1.00195312f},     // 1 + 3 * 2^-11: to even
      {DType::kFloat16, 65504.0f, {0xFF, 0x7B}, 65504.0f},
      {DType::kFloat16, 65520.0f, {0x00, 0x7C}, kInf},               // tie above max: inf
      {DType::kFloat16, 5.96046448e-8f, {0x01, 0x00}, 5.96046448e-8f},  // 2^-24
      {DType::kFloat16, 2.98023224e-8f, {0x00, 0x00}, 0.0f},         // 2^-25: tie, to 0
      // fp8 e4m3: 4 significant bits, saturating to +-448 (no infinities), subnormals 2^-9.
      {DType::kFloat8E4m3, 1.0f, {0x38}, 1.0f},
      {DType::kFloat8E4m3, -3.0f, {0xC4}, -3.0f},
      {DType::kFloat8E4m3, 1.0625f, {0x38}, 1.0f},   // tie between 1 and 1.125: to even
      {DType::kFloat8E4m3, 1.1875f, {0x3A}, 1.25f},  // tie between 1.125 and 1.25: to even
      {DType::kFloat8E4m3, 1.07f, {0x39}, 1.125f},   // above the tie
      {DType::kFloat8E4m3, 448.0f, {0x7E}, 448.0f},
      {DType::kFloat8E4m3, 480.0f, {0x7E}, 448.0f},     // beyond the max: saturates
      {DType::kFloat8E4m3, -1000.0f, {0xFE}, -448.0f},  // saturates with its sign
      {DType::kFloat8E4m3, kInf, {0x7E}, 448.0f},       // infinity saturates too
      {DType::kFloat8E4m3, 0.001953125f, {0x01}, 0.001953125f},  // 2^-9, smallest subnormal
      {DType::kFloat8E4m3, 0.0009765625f, {0x00}, 0.0f},         // 2^-10: tie, to 0
  };
}

TEST(DTypeStorageTest, StoresTheRoundedBitsAndLoadsThemBack) {
  for (const StorageCase& c : Cases()) {
    SCOPED_TRACE(testing::Message() << "dtype " << static_cast<int>(c.dtype) << ", value "
                                    << c.value);
    ASSERT_EQ(c.bytes.size(), static_cast<size_t>(ElementSize(c.dtype)));
    // One byte of padding on each side: StoreAs writes only its element, at any alignment.
    std::vector<uint8_t> buffer(c.bytes.size() + 2, 0xA5);
    StoreAs(c.dtype, c.value, &buffer[1]);
    EXPECT_EQ(std::vector<uint8_t>(buffer.begin() + 1, buffer.end() - 1), c.bytes);
    EXPECT_EQ(buffer.front(), 0xA5);
    EXPECT_EQ(buffer.back(), 0xA5);
    const float loaded = LoadAs(c.dtype, &buffer[1]);
    EXPECT_EQ(loaded, c.loaded);
    EXPECT_EQ(std::signbit(loaded), std::signbit(c.loaded));
  }
}

TEST(DTypeStorageTest, NanStaysNan) {
  for (const DType dtype :
       {DType::kFloat32, DType::kBFloat16, DType::kFloat16, DType::kFloat8E4m3}) {
    std::vector<uint8_t> bytes(ElementSize(dtype));
    StoreAs(dtype, std::nanf(""), bytes.data());
    EXPECT_TRUE(std::isnan(LoadAs(dtype, bytes.data()))) << static_cast<int>(dtype);
  }
  std::vector<uint8_t> fp8(1);
  StoreAs(DType::kFloat8E4m3, -std::nanf(""), fp8.data());
  EXPECT_EQ(fp8[0], 0x7F);  // e4m3's NaN, whatever the sign (as CUDA's conversion gives)
}

TEST(DTypeStorageTest, WholeBuffers) {
  const std::vector<float> values = {1.0f, -2.5f, 1.00390625f};
  const std::vector<uint8_t> bf16 = StoreAllAs(DType::kBFloat16, values);
  EXPECT_EQ(bf16, (std::vector<uint8_t>{0x80, 0x3F, 0x20, 0xC0, 0x80, 0x3F}));
  EXPECT_EQ(LoadAllAs(DType::kBFloat16, bf16), (std::vector<float>{1.0f, -2.5f, 1.0f}));

  const std::vector<uint8_t> fp32 = StoreAllAs(DType::kFloat32, values);
  EXPECT_EQ(fp32.size(), 12u);
  EXPECT_EQ(LoadAllAs(DType::kFloat32, fp32), values);

  EXPECT_EQ(StoreAllAs(DType::kFloat8E4m3, {1.0f, 500.0f}), (std::vector<uint8_t>{0x38, 0x7E}));
  // A trailing partial element is not read.
  EXPECT_EQ(LoadAllAs(DType::kFloat16, {0x00, 0x3C, 0x00}), (std::vector<float>{1.0f}));
  EXPECT_TRUE(StoreAllAs(DType::kFloat16, {}).empty());
}

}  // namespace
}  // namespace mrope
