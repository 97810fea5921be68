#ifndef MROPE_BENCHMARKS_MEMSET_REFERENCE_H_
#define MROPE_BENCHMARKS_MEMSET_REFERENCE_H_

// The reference the position benchmarks divide by: a memset of the output bytes.

#include <cstring>
#include <vector>

#include "benchmark/benchmark.h"

namespace mrope {

// Overwrites `out` with a byte that changes at every call (`round` counts the calls), so that
// the compiler cannot drop a call as a repeat of the one before, and keeps the stores.
template <typename T>
void MemsetOnce(std::vector<T>& out, int& round) {
  std::memset(out.data(), ++round & 0x7f, out.size() * sizeof(T));
  benchmark::DoNotOptimize(out.data());
  benchmark::ClobberMemory();
}

}  // namespace mrope

#endif  // MROPE_BENCHMARKS_MEMSET_REFERENCE_H_
