// The M-RoPE CUDA kernel and its dispatch (see kernels/mrope_kernel.h for the contract).
//
// Block = (units per head) x (heads per pass) x (tokens per block); blockIdx.x picks a group of
// tokens, blockIdx.y a chunk of the q+k heads (more than one chunk only for small T). A thread
// covers one unit of its token in every blockDim.y-th head. Per token group:
//   1. every thread issues the loads of its units in its first kPasses heads;
//   2. positions of each token and axis into shared memory (+ device error checks); the first
//      group also stages the per-pair inv_freq and axes in shared memory (StagePositions);
//   3. cos/sin of each (token, pair) into shared memory, once per token and pair (StageCosSin);
//   4. every thread rotates its unit of each head it covers and stores it back.
// Measured on an H100 (kernels/BENCHMARKS.md): prefill is bound by the bytes in flight (hence
// kPassesInFlight), decode by the latency of this chain (hence the overlaps in step 2 and a
// thread per cos/sin slot in the planner).

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

// Blocks of 256 threads that must fit on an SM together, which caps the registers per thread
// (65536 / (blocks * 256), rounded down to the allocation unit) without spilling (checked for
// sm_80, sm_90 and sm_100 by kernels/host_harness:resource_usage_test): 80 with
// kPassesInFlight; 48 with one pass, but 64 for the one-pass vector kernels of a generic
// rotary_dim (not 64, 128 or 256), which spilled at 48 on sm_90 and sm_100 (kernels/BENCHMARKS.md).
template <int kVec, int kRotaryDim, int kPasses>
constexpr int kMinBlocksPerSm = kPasses > 1 ? 3 : kVec > 1 && kRotaryDim == 0 ? 4 : 5;

// The shared memory of one block. At namespace scope (legal CUDA: still one copy per block)
// so that the host execution harness can place it where it poisons it at every block start:
// GCC before 14 ignores the section attribute on static locals of templates (PR 88061).
__shared__ RotationShared shared;

// The rotary_dim StagePositions copies the pair parameters for: prefill kernels (kPasses > 1)
// take the generic loop, one group of 16 pairs at a time, since the loads of kPasses heads
// already hold 8 kPasses registers and the unrolled copy's 20 per group made sm_80 spill (a
// prefill block's copy overlaps its position load); decode keeps the unrolled copy, its launch
// being a chain of latencies.
template <int kRotaryDim, int kPasses>
constexpr int kStagedRotaryDim = kPasses == 1 ? kRotaryDim : 0;

// kVec: elements per access (16 bytes, or 1 for the scalar path). kRotaryDim: compile-time
// rotary_dim for the specialised kernels, 0 to read it from the parameters. kPasses: heads
// whose loads a thread issues before the barriers (LaunchPlan::passes_in_flight). kSplit:
// XD-RoPE's split halves over p.rotary.num_axes axes (NeoX, generic rotary_dim); the
// three-axis kernels are the others, compiled as if it did not exist.
template <typename T, int kVec, RotaryLayout kLayout, int kRotaryDim, int kPasses, bool kSplit>
__global__ void __launch_bounds__(kMaxBlockThreads, kMinBlocksPerSm<kVec, kRotaryDim, kPasses>)
    MropeKernel(const __grid_constant__ KernelParams p) {
  const int num_pairs = (kRotaryDim != 0 ? kRotaryDim : p.rotary_dim) / 2;
  const int num_axes = AxesRead<kSplit>(p.rotary);
  const int slots_per_token = kSplit ? 2 * num_pairs : num_pairs;
  const int unit = threadIdx.x;
  const int z = threadIdx.z;
  const int tokens_per_block = blockDim.z;
  const int tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  const int num_threads = blockDim.x * blockDim.y * blockDim.z;
  const int first_head = blockIdx.y * p.heads_per_chunk + threadIdx.y;
  const int head_end = static_cast<int>(
      min(int64_t{p.num_q_heads} + p.num_k_heads, int64_t{blockIdx.y + 1} * p.heads_per_chunk));

  for (int64_t group = blockIdx.x; group * tokens_per_block < p.num_tokens; group += gridDim.x) {
    const int64_t group_token = group * tokens_per_block;
    const int64_t token = group_token + z;

    // 1. The units of this thread's first kPasses heads: their loads stay in flight while
    //    positions and cos/sin are computed.
    Unit<T, kVec> x[kPasses];
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const int head = first_head + i * blockDim.y;
      if (token < p.num_tokens && head < head_end) {
        x[i] = LoadUnit<kLayout, T, kVec>(HeadPointer<T>(p, token, head), unit, num_pairs);
      }
    }

    // 2. Positions of each (token, axis) of the group; the first group also stages the pair
    //    parameters.
    StagePositions<kStagedRotaryDim<kRotaryDim, kPasses>, kSplit>(
        p.rotary, group_token, p.num_tokens, tokens_per_block, num_pairs, tid, num_threads,
        /*stage_pairs=*/group == blockIdx.x, shared);
    __syncthreads();

    // 3. cos/sin, slot tz * slots_per_token + pair (kSplit: + element).
    StageCosSin<kSplit>(p.rotary, tokens_per_block, num_pairs, tid, num_threads, shared);
    __syncthreads();

    // 4. Rotate and store every head of this thread's row.
    if (!TokenSkipped(AxisRow<kSplit>(shared.skip_axis, z, num_axes), num_axes)) {
      const float* cos = shared.cos + z * slots_per_token;
      const float* sin = shared.sin + z * slots_per_token;
#pragma unroll
      for (int i = 0; i < kPasses; ++i) {
        const int head = first_head + i * blockDim.y;
        if (head < head_end) {
          RotateUnit<kLayout, kSplit>(x[i], unit, num_pairs, cos, sin);
          StoreUnit<kLayout>(HeadPointer<T>(p, token, head), unit, num_pairs, x[i]);
        }
      }
      // Passes beyond those in flight, one head at a time.
      for (int head = first_head + kPasses * blockDim.y; head < head_end;
           head += blockDim.y) {
        T* const head_ptr = HeadPointer<T>(p, token, head);
        Unit<T, kVec> y = LoadUnit<kLayout, T, kVec>(head_ptr, unit, num_pairs);
        RotateUnit<kLayout, kSplit>(y, unit, num_pairs, cos, sin);
        StoreUnit<kLayout>(head_ptr, unit, num_pairs, y);
      }
    }
    __syncthreads();  // shared memory is rewritten for the next token group
  }
}

template <typename T, int kVec, RotaryLayout kLayout, int kRotaryDim, bool kSplit = false>
cudaError_t Launch(const LaunchPlan& plan, cudaStream_t stream) {
  const dim3 grid(plan.grid_x, plan.grid_y);
  const dim3 block(plan.block_x, plan.block_y, plan.block_z);
  if constexpr (kVec > 1) {
    if (plan.passes_in_flight == kPassesInFlight) {
      return LaunchKernel<kMaxBlockThreads>(
          &MropeKernel<T, kVec, kLayout, kRotaryDim, kPassesInFlight, kSplit>, grid, block,
          stream, plan.params);
    }
  }
  return LaunchKernel<kMaxBlockThreads>(&MropeKernel<T, kVec, kLayout, kRotaryDim, 1, kSplit>,
                                        grid, block, stream, plan.params);
}

template <typename T, RotaryLayout kLayout>
cudaError_t LaunchForLayout(const LaunchPlan& plan, cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(T);
  if constexpr (kLayout == RotaryLayout::kNeox) {
    // Split halves (XD-RoPE): NeoX only, the generic rotary_dim (the planner checks both).
    if (plan.params.rotary.split_halves) {
      return plan.vectorized ? Launch<T, kVec, kLayout, 0, true>(plan, stream)
                             : Launch<T, 1, kLayout, 0, true>(plan, stream);
    }
  }
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
  return ResultOf(ForStorageType(plan.dtype, [&](auto element) {
    return LaunchForType<decltype(element)>(plan, stream);
  }));
}

}  // namespace kernel_internal
}  // namespace mrope
