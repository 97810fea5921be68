#include "mrope/positions/fill_kernels.h"

#include <cstdint>
#include <cstring>

// Not under sanitizers (MROPE_NO_IFUNC, set by .bazelrc's asan/tsan configs): the clones'
// IFUNC resolver runs during relocation, before a sanitizer runtime is initialised, and an
// instrumented resolver crashes there (seen with TSan).
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(MROPE_NO_IFUNC)
#define MROPE_STORE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define MROPE_STORE_CLONES
#endif

namespace mrope {
namespace {

// Blocks of 8 with a constant trip count vectorise at -O2 (GCC's cheap cost model rejects the
// plain loop, whose count is unknown); value_at(i) must be a cheap function of i.
template <typename T, typename ValueAt>
inline void Blocked(T* out, int64_t n, ValueAt value_at) {
  constexpr int64_t kBlock = 8;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (int64_t j = 0; j < kBlock; ++j) out[i + j] = value_at(i + j);
  }
  for (; i < n; ++i) out[i] = value_at(i);
}

}  // namespace

MROPE_STORE_CLONES void FillConstant(int64_t* out, int64_t n, int64_t value) {
  Blocked(out, n, [value](int64_t) { return value; });
}
MROPE_STORE_CLONES void FillConstant(int32_t* out, int64_t n, int32_t value) {
  Blocked(out, n, [value](int64_t) { return value; });
}
MROPE_STORE_CLONES void FillConstant(float* out, int64_t n, float value) {
  Blocked(out, n, [value](int64_t) { return value; });
}

MROPE_STORE_CLONES void FillCounting(int64_t* out, int64_t n, int64_t first) {
  Blocked(out, n, [first](int64_t i) { return first + i; });
}
MROPE_STORE_CLONES void FillCounting(int32_t* out, int64_t n, int32_t first) {
  Blocked(out, n, [first](int64_t i) { return first + static_cast<int32_t>(i); });
}
MROPE_STORE_CLONES void FillCounting(float* out, int64_t n, int64_t first) {
  Blocked(out, n, [first](int64_t i) { return static_cast<float>(first + i); });
}
MROPE_STORE_CLONES void FillCountingFloat32(float* out, int64_t n, float base, int64_t offset) {
  Blocked(out, n, [base, offset](int64_t i) { return base + static_cast<float>(offset + i); });
}

int64_t RunEnd(absl::Span<const int64_t> values, int64_t begin, int64_t value) {
  constexpr int64_t kRunBlock = 64;
  int64_t block[kRunBlock];
  Blocked(block, kRunBlock, [value](int64_t) { return value; });
  const int64_t n = values.size();
  const int64_t* v = values.data();
  int64_t i = begin;
  while (i + kRunBlock <= n && std::memcmp(v + i, block, sizeof(block)) == 0) i += kRunBlock;
  while (i < n && v[i] == value) ++i;
  return i;
}

}  // namespace mrope
