// The M-RoPE CUDA kernel and its dispatch (see kernels/mrope_kernel.h for the contract).
//
// Block = (units per head) x (heads per pass) x (tokens per block); blockIdx.x picks a group of
// tokens, blockIdx.y a chunk of the q+k heads (more than one chunk only for small T). Once per
// block, the per-pair inv_freq and axis are staged in shared memory (indexing the by-value
// parameters with a per-thread index would serialise the reads). Per token group:
//   1. every thread issues the loads of its first (token, head) unit;
//   2. phase A: positions of each token and axis into shared memory (+ device error checks);
//   3. phase B: cos/sin of each (token, pair) into shared memory, once per token and pair;
//   4. every thread rotates its unit of each head it covers and stores it back.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/kernel_launch.cuh"
#include "kernels/kernel_params.h"
#include "kernels/mrope_device.cuh"
#include "mrope/rotary/rope_math.h"

namespace mrope {
namespace kernel_internal {
namespace {

// Caps registers at 48 per thread (65536 / (5 * 256), rounded down to the allocation unit)
// without spilling, so at least 5 full blocks (1280 threads) share an SM: enough 16-byte
// loads in flight to cover HBM latency.
constexpr int kMinBlocksPerSm = 5;

// The shared memory of one block. At namespace scope (legal CUDA: still one copy per block)
// so that the host execution harness can place it where it poisons it at every block start:
// GCC before 14 ignores the section attribute on static locals of templates (PR 88061).
struct BlockShared {
  alignas(16) float cos[kSharedPairs];
  alignas(16) float sin[kSharedPairs];
  int64_t position[kMaxTokensPerBlock][kNumAxes];
  bool skip_axis[kMaxTokensPerBlock][kNumAxes];
  float inv_freq[kMaxRotaryPairs];
  uint8_t axis[kMaxRotaryPairs];
};
__shared__ BlockShared shared;

// True if the token must not be touched (beyond num_tokens, or a device error on any axis).
__device__ __forceinline__ bool TokenSkipped(const bool (&skip_axis)[kNumAxes]) {
  return skip_axis[0] || skip_axis[1] || skip_axis[2];
}

// kVec: elements per access (16 bytes, or 1 for the scalar path). kRotaryDim: compile-time
// rotary_dim for the specialised kernels, 0 to read it from the parameters.
template <typename T, int kVec, RotaryLayout kLayout, int kRotaryDim>
__global__ void __launch_bounds__(kMaxBlockThreads, kMinBlocksPerSm)
    MropeKernel(const __grid_constant__ KernelParams p) {
  const int num_pairs = (kRotaryDim != 0 ? kRotaryDim : p.rotary_dim) / 2;
  const int unit = threadIdx.x;
  const int z = threadIdx.z;
  const int tokens_per_block = blockDim.z;
  const int tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  const int num_threads = blockDim.x * blockDim.y * blockDim.z;
  const int first_head = blockIdx.y * p.heads_per_chunk + threadIdx.y;
  const int head_end = static_cast<int>(
      min(int64_t{p.num_q_heads} + p.num_k_heads, int64_t{blockIdx.y + 1} * p.heads_per_chunk));

  // Read after the first barrier below, never written again.
  for (int pair = tid; pair < num_pairs; pair += num_threads) {
    shared.inv_freq[pair] = p.inv_freq[pair];
    shared.axis[pair] = p.axis_map.axis[pair];
  }

  for (int64_t group = blockIdx.x; group * tokens_per_block < p.num_tokens; group += gridDim.x) {
    const int64_t group_token = group * tokens_per_block;
    const int64_t token = group_token + z;

    // 1. The first unit's loads stay in flight while cos/sin are computed.
    T* head_ptr = nullptr;
    Unit<T, kVec> x;
    if (token < p.num_tokens && first_head < head_end) {
      head_ptr = HeadPointer<T>(p, token, first_head);
      x = LoadUnit<kLayout, T, kVec>(head_ptr, unit, num_pairs);
    }

    // 2. Positions.
    for (int i = tid; i < tokens_per_block * kNumAxes; i += num_threads) {
      const int tz = i / kNumAxes;
      const int axis = i % kNumAxes;
      int64_t position = 0;
      bool skip = true;
      if (group_token + tz < p.num_tokens) {
        skip = !LoadPosition(p, group_token + tz, axis, &position);
      }
      shared.position[tz][axis] = position;
      shared.skip_axis[tz][axis] = skip;
    }
    __syncthreads();

    // 3. cos/sin, slot tz * num_pairs + pair.
    for (int i = tid; i < tokens_per_block * num_pairs; i += num_threads) {
      const int tz = i / num_pairs;
      const int pair = i - tz * num_pairs;
      if (TokenSkipped(shared.skip_axis[tz])) continue;
      const CosSin cs = LookupCosSin(p, pair, shared.inv_freq[pair],
                                     shared.position[tz][shared.axis[pair]]);
      shared.cos[i] = cs.cos;
      shared.sin[i] = cs.sin;
    }
    __syncthreads();

    // 4. Rotate and store every head of this thread's row.
    if (!TokenSkipped(shared.skip_axis[z])) {
      const float* cos = shared.cos + z * num_pairs;
      const float* sin = shared.sin + z * num_pairs;
      for (int head = first_head; head < head_end; head += blockDim.y) {
        if (head != first_head) {
          head_ptr = HeadPointer<T>(p, token, head);
          x = LoadUnit<kLayout, T, kVec>(head_ptr, unit, num_pairs);
        }
        RotateUnit<kLayout>(x, unit, num_pairs, cos, sin);
        StoreUnit<kLayout>(head_ptr, unit, num_pairs, x);
      }
    }
    __syncthreads();  // shared memory is rewritten for the next token group
  }
}

template <typename T, int kVec, RotaryLayout kLayout, int kRotaryDim>
cudaError_t Launch(const LaunchPlan& plan, cudaStream_t stream) {
  const dim3 grid(plan.grid_x, plan.grid_y);
  const dim3 block(plan.block_x, plan.block_y, plan.block_z);
  return LaunchKernel<kMaxBlockThreads>(&MropeKernel<T, kVec, kLayout, kRotaryDim>, grid, block,
                                        stream, plan.params);
}

template <typename T, RotaryLayout kLayout>
cudaError_t LaunchForLayout(const LaunchPlan& plan, cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(T);
  if (!plan.vectorized) return Launch<T, 1, kLayout, 0>(plan, stream);
  switch (plan.specialized_rotary_dim) {
    case 64:
      return Launch<T, kVec, kLayout, 64>(plan, stream);
    case 128:
      return Launch<T, kVec, kLayout, 128>(plan, stream);
    case 256:
      return Launch<T, kVec, kLayout, 256>(plan, stream);
    default:
      return Launch<T, kVec, kLayout, 0>(plan, stream);
  }
}

template <typename T>
cudaError_t LaunchForType(const LaunchPlan& plan, cudaStream_t stream) {
  return plan.layout == RotaryLayout::kNeox ? LaunchForLayout<T, RotaryLayout::kNeox>(plan, stream)
                                            : LaunchForLayout<T, RotaryLayout::kGptj>(plan, stream);
}

}  // namespace

EnqueueResult EnqueueMropeKernel(const LaunchPlan& plan, GpuStream stream) {
  cudaError_t error = cudaErrorInvalidValue;
  switch (plan.dtype) {
    case DType::kFloat32:
      error = LaunchForType<float>(plan, stream);
      break;
    case DType::kBFloat16:
      error = LaunchForType<__nv_bfloat16>(plan, stream);
      break;
    case DType::kFloat16:
      error = LaunchForType<__half>(plan, stream);
      break;
  }
  return {static_cast<int>(error), error == cudaSuccess ? nullptr : cudaGetErrorString(error)};
}

}  // namespace kernel_internal
}  // namespace mrope
