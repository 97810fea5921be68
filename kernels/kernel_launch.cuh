#ifndef MROPE_KERNELS_KERNEL_LAUNCH_CUH_
#define MROPE_KERNELS_KERNEL_LAUNCH_CUH_

// The one place a kernel of kernels/ is launched. On the GPU it is cudaLaunchKernel; under the
// host execution harness (kernels/host_harness, MROPE_HOST_HARNESS) the same call runs every
// CUDA thread of every block as a fiber on the CPU, so the kernel source needs no rewrite.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/kernel_params.h"

namespace mrope {
namespace kernel_internal {

// Launches kernel<<<grid, block, 0, stream>>>(params) and returns the error of this launch
// alone: earlier, unrelated errors in the thread's last-error state are neither reported nor
// cleared (cudaGetLastError after `<<<>>>` would do both). kMaxThreadsPerBlock is the
// kernel's __launch_bounds__; a larger block is refused before launching.
template <int kMaxThreadsPerBlock, typename Params>
cudaError_t LaunchKernel(void (*kernel)(Params), dim3 grid, dim3 block, cudaStream_t stream,
                         const Params& params) {
#if defined(MROPE_HOST_HARNESS)
  return mrope_host::Launch(kMaxThreadsPerBlock, grid, block, stream,
                            [kernel, params] { kernel(params); });
#else
  if (static_cast<uint64_t>(block.x) * block.y * block.z > kMaxThreadsPerBlock) {
    return cudaErrorInvalidConfiguration;
  }
  void* args[] = {const_cast<Params*>(&params)};
  return cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, args,
                          /*sharedMem=*/0, stream);
#endif
}

// Returns launch(T{}) for T the storage type of `dtype` (float, __nv_bfloat16, __half), or
// cudaErrorInvalidValue for any other dtype (the validations refuse them before this point).
template <typename Launch>
cudaError_t ForStorageType(DType dtype, Launch launch) {
  switch (dtype) {
    case DType::kFloat32:
      return launch(float{});
    case DType::kBFloat16:
      return launch(__nv_bfloat16{});
    case DType::kFloat16:
      return launch(__half{});
    default:
      return cudaErrorInvalidValue;
  }
}

inline EnqueueResult ResultOf(cudaError_t error) {
  return {static_cast<int>(error), error == cudaSuccess ? nullptr : cudaGetErrorString(error)};
}

}  // namespace kernel_internal
}  // namespace mrope

#endif  // MROPE_KERNELS_KERNEL_LAUNCH_CUH_
