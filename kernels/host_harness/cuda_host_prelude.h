#ifndef MROPE_KERNELS_HOST_HARNESS_CUDA_HOST_PRELUDE_H_
#define MROPE_KERNELS_HOST_HARNESS_CUDA_HOST_PRELUDE_H_

// Force-included (g++ -include) ahead of a .cu file that the host execution harness compiles
// as plain C++, so that the kernel's own, unmodified source runs on the CPU (README.md next to
// this file). It gives CUDA's keywords, built-in variables and the few device intrinsics
// mrope's kernels use a host meaning backed by host_runtime.h, and makes the kernel launch
// helper (kernels/kernel_launch.cuh) run the threads as fibers.

#define MROPE_HOST_HARNESS 1

// CUDA's headers define these only when they are not defined yet.
#define __global__
#define __device__
#define __host__
#define __grid_constant__
#define __launch_bounds__(...)
// A __shared__ variable becomes a static in one linker section, which the harness poisons at
// every block start; blocks run one at a time, so one copy suffices. Declare __shared__
// variables at namespace scope: GCC before 14 ignores section attributes on static locals of
// templates (PR 88061), so a __shared__ local of a kernel template would escape the poisoning.
// Each is 128-byte aligned, as a kernel's one __shared__ variable is at offset 0 on a GPU, so
// that the access model's bank of an address is (address % 128) / 4.
#define __shared__ __attribute__((section("mrope_host_shared"), aligned(128))) static

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kernels/host_harness/access_model.h"
#include "kernels/host_harness/host_runtime.h"

#define threadIdx (::mrope_host::CurrentThread().thread_idx)
#define blockIdx (::mrope_host::CurrentThread().block_idx)
#define blockDim (::mrope_host::CurrentThread().block_dim)
#define gridDim (::mrope_host::CurrentThread().grid_dim)
#define __syncthreads() ::mrope_host::SyncThreads(__FILE__, __LINE__)

// The kernels' Load/Store helpers (kernels/mrope_device.cuh) take their caller's file and line
// and record the access while the access model is on (access_model.h).
#define MROPE_ACCESS_SITE \
  , const char *access_file = __builtin_FILE(), int access_line = __builtin_LINE()
#define MROPE_PASS_SITE , access_file, access_line
#define MROPE_RECORD_ACCESS(address, bytes, is_store)                                     \
  if (::mrope_host::access_recording) {                                                   \
    ::mrope_host::RecordAccess(address, bytes, is_store, access_file, access_line);       \
  }

inline float __uint_as_float(unsigned int bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

inline unsigned int __float_as_uint(float value) {
  unsigned int bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// Relaxed atomics, like the device's: fibers of one block never run at the same time, but
// ThreadSanitizer must see the flag updates as atomic, not racy.
inline int atomicOr(int* address, int value) {
  return __atomic_fetch_or(address, value, __ATOMIC_RELAXED);
}

inline void __stwb(uint4* address, uint4 value) {
  ::mrope_host::CheckAligned(address, sizeof(uint4), "16-byte store");
  *address = value;
}

// The device's integer min (the host headers declare it only for nvcc).
template <typename T>
inline T min(T a, T b) {
  return b < a ? b : a;
}

// The __shared__ section of the binary or shared object this translation unit is linked into
// (the linker defines __start_/__stop_ symbols per link unit; hidden, so each unit registers
// its own).
extern "C" char __start_mrope_host_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_mrope_host_shared[] __attribute__((weak, visibility("hidden")));
namespace mrope_host {
namespace {
[[maybe_unused]] const bool shared_memory_registered =
    RegisterSharedMemory(__start_mrope_host_shared, __stop_mrope_host_shared);
}  // namespace
}  // namespace mrope_host

#endif  // MROPE_KERNELS_HOST_HARNESS_CUDA_HOST_PRELUDE_H_
