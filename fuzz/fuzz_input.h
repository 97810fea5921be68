#ifndef MROPE_FUZZ_FUZZ_INPUT_H_
#define MROPE_FUZZ_FUZZ_INPUT_H_

// A byte reader that turns a fuzzer's input into structured values, front to back. Reading
// past the end gives zeros, so every input decodes to something. (clang's FuzzedDataProvider
// would do, but the replay tests are built with gcc, which does not ship it; the seed writer,
// fuzz/make_seeds.py, encodes this same format.)
//
// FUZZ_CHECK(cond, message) aborts with `message` when a property the library promises does
// not hold, so libFuzzer records the input as a crash.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/string_view.h"

namespace mrope {
namespace fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }

  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool Bool() { return (Byte() & 1) != 0; }

  // Little-endian unsigned integers of 2, 4 and 8 bytes.
  uint16_t U16() { return static_cast<uint16_t>(Bytes(2)); }
  uint32_t U32() { return static_cast<uint32_t>(Bytes(4)); }
  uint64_t U64() { return Bytes(8); }
  int64_t I64() { return static_cast<int64_t>(U64()); }

  // Any float32 / float64 bit pattern, NaN and infinities included.
  float Float32() {
    const uint32_t bits = U32();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  double Float64() {
    const uint64_t bits = U64();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }

  // A length: one byte below 128 is itself; otherwise 15 bits over two bytes (up to 32767).
  int64_t Length() {
    const uint8_t first = Byte();
    if (first < 128) return first;
    return (static_cast<int64_t>(first - 128) << 8) | Byte();
  }

  // Mostly small, sometimes anything: like Length(), except that a first byte of 255 reads a
  // raw int64 (negative and huge values included).
  int64_t Wide() {
    const uint8_t first = Byte();
    if (first == 255) return I64();
    if (first < 128) return first;
    return (static_cast<int64_t>(first - 128) << 8) | Byte();
  }

  // The rest of the input as text.
  absl::string_view Rest() {
    const size_t at = pos_ < size_ ? pos_ : size_;
    pos_ = size_;
    return absl::string_view(reinterpret_cast<const char*>(data_) + at, size_ - at);
  }

 private:
  uint64_t Bytes(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(Byte()) << (8 * i);
    return v;
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

[[noreturn]] inline void CheckFailed(const char* file, int line, const char* cond,
                                     const std::string& message) {
  std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", file, line, cond, message.c_str());
  std::abort();
}

}  // namespace fuzz
}  // namespace mrope

#define FUZZ_CHECK(cond, message)                                              \
  do {                                                                         \
    if (!(cond)) ::mrope::fuzz::CheckFailed(__FILE__, __LINE__, #cond, (message)); \
  } while (false)

#endif  // MROPE_FUZZ_FUZZ_INPUT_H_
