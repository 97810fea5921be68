#ifndef MROPE_KERNELS_HOST_HARNESS_HOST_RUNTIME_H_
#define MROPE_KERNELS_HOST_HARNESS_HOST_RUNTIME_H_

// The host execution harness's runtime: runs a CUDA kernel compiled as host C++ (see
// cuda_host_prelude.h) with every thread of a block as a fiber and the blocks one after
// another, and checks what a GPU would not report by itself:
//  - launch configuration: block and grid limits of the CUDA runtime and the kernel's
//    __launch_bounds__ (refused with cudaErrorInvalidConfiguration, as a GPU would);
//  - __syncthreads(): a barrier that opens when every thread of the block waits at the same
//    call site; a thread that has exited or waits elsewhere is barrier divergence (fatal);
//  - shared memory poisoned with 0xFF at every block start (a read of unwritten shared memory
//    shows in the results); 16-byte device stores checked for alignment (fatal);
//  - under ThreadSanitizer, each barrier is the only synchronisation between the threads of
//    a block, so two threads touching one element with no barrier between them are a race.
// Errors a GPU would turn into a sticky launch failure print "mrope host harness: ..." and
// abort the process.
//
// Blocks run in the order Options::order (default: shuffled), and so do the threads between
// two barriers; MROPE_HOST_ORDER=forward|reverse|shuffle and MROPE_HOST_SEED=<n> set the
// defaults from the environment.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace mrope_host {

// The CUDA built-in variables of the thread that is running.
struct ThreadIndex {
  uint3 thread_idx;
  uint3 block_idx;
  dim3 block_dim;
  dim3 grid_dim;
};
const ThreadIndex& CurrentThread();

// __syncthreads() of the running thread; `file`:`line` names the call site.
void SyncThreads(const char* file, int line);

// Aborts unless `address` is a multiple of `alignment` (an access the GPU would fault on).
void CheckAligned(const void* address, size_t alignment, const char* access);

// Registers a link unit's __shared__ section (cuda_host_prelude.h does this for every kernel
// translation unit). Null or repeated ranges are ignored. Always returns true.
bool RegisterSharedMemory(char* begin, char* end);

// True if `address` lies in a registered __shared__ section.
bool IsSharedMemory(const void* address);

enum class Order { kForward, kReverse, kShuffle };
struct Options {
  Order order = Order::kShuffle;
  uint32_t seed = 1;
};
Options GetOptions();
void SetOptions(const Options& options);

// Runs `thread_body` as each thread of a <<<grid, block>>> launch, or records the launch when
// `stream` is being captured (BeginCapture). Returns cudaErrorInvalidConfiguration, running
// nothing, for a shape a GPU would refuse or above max_threads_per_block.
cudaError_t Launch(int max_threads_per_block, dim3 grid, dim3 block, cudaStream_t stream,
                   std::function<void()> thread_body);

// Graph capture: launches on `stream` between BeginCapture and EndCapture are recorded, not
// run; EndCapture returns them, each replayable any number of times.
void BeginCapture(cudaStream_t stream);
std::vector<std::function<void()>> EndCapture(cudaStream_t stream);

}  // namespace mrope_host

#endif  // MROPE_KERNELS_HOST_HARNESS_HOST_RUNTIME_H_
