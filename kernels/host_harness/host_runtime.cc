#include "kernels/host_harness/host_runtime.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/host_harness/access_model.h"
#include "kernels/host_harness/fiber.h"

namespace mrope_host {
namespace {

// Limits of the CUDA runtime on sm_90.
constexpr uint64_t kMaxThreadsPerBlock = 1024;
constexpr uint32_t kMaxBlockDimZ = 64;
constexpr uint64_t kMaxGridDimX = (uint64_t{1} << 31) - 1;
constexpr uint32_t kMaxGridDimYZ = 65535;
// Opt-in shared memory per block on sm_90. The harness only sees the __shared__ variables of
// all kernels together (one section), so it checks that sum: a bound on any one kernel.
constexpr size_t kMaxSharedBytesPerBlock = 227 * 1024;
// The harness runs blocks one by one; far larger grids would take hours on a CPU anyway.
constexpr uint64_t kMaxHarnessBlocks = uint64_t{1} << 24;
// Kernel frames are small; ASan's redzones and fake frames need the headroom.
constexpr size_t kFiberStackBytes = 256 * 1024;

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "mrope host harness: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

std::string Str(uint3 v) {
  return "(" + std::to_string(v.x) + "," + std::to_string(v.y) + "," + std::to_string(v.z) + ")";
}

Options OptionsFromEnvironment() {
  Options options;
  if (const char* order = std::getenv("MROPE_HOST_ORDER"); order != nullptr) {
    const std::string value = order;
    if (value == "forward") {
      options.order = Order::kForward;
    } else if (value == "reverse") {
      options.order = Order::kReverse;
    } else if (value == "shuffle") {
      options.order = Order::kShuffle;
    } else {
      Fail("MROPE_HOST_ORDER=" + value + ": expected forward, reverse or shuffle");
    }
  }
  if (const char* seed = std::getenv("MROPE_HOST_SEED"); seed != nullptr) {
    options.seed = static_cast<uint32_t>(std::strtoul(seed, nullptr, 10));
  }
  return options;
}

Options& MutableOptions() {
  static Options options = OptionsFromEnvironment();
  return options;
}

struct SharedSections {
  std::vector<std::pair<char*, char*>> ranges;
  size_t bytes = 0;
};
SharedSections& Shared() {
  static SharedSections* sections = new SharedSections;
  return *sections;
}

struct Capture {
  cudaStream_t stream = nullptr;
  bool active = false;
  std::vector<std::function<void()>> launches;
};
Capture& CurrentCapture() {
  static Capture* capture = new Capture;
  return *capture;
}

// `count` indices in the configured order.
std::vector<uint32_t> Ordered(uint32_t count, const Options& options, std::mt19937& rng) {
  std::vector<uint32_t> order(count);
  std::iota(order.begin(), order.end(), 0u);
  if (options.order == Order::kReverse) std::reverse(order.begin(), order.end());
  if (options.order == Order::kShuffle) std::shuffle(order.begin(), order.end(), rng);
  return order;
}

enum class State { kRunnable, kWaiting, kExited };

class BlockRunner;

struct Thread {
  BlockRunner* runner = nullptr;
  Fiber* fiber = nullptr;
  ThreadIndex index;
  State state = State::kRunnable;
  const char* barrier_file = nullptr;  // where it waits
  int barrier_line = 0;
};

thread_local Thread* current_thread = nullptr;

// TSan synchronisation objects (their addresses are what matters). Barrier instance k uses
// barrier_sync[k % 2]: a thread leaving instance k must not acquire what another thread
// released on arriving at instance k + 1.
char block_start_sync;
char block_end_sync;
char barrier_sync[2];

class BlockRunner {
 public:
  BlockRunner(dim3 grid, dim3 block, const std::function<void()>& body, const Options& options)
      : body_(body), options_(options) {
    const uint32_t count = block.x * block.y * block.z;
    static std::vector<std::unique_ptr<Fiber>>* pool = new std::vector<std::unique_ptr<Fiber>>;
    while (pool->size() < count) pool->push_back(std::make_unique<Fiber>(kFiberStackBytes));
    threads_.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
      Thread& t = threads_[i];
      t.runner = this;
      t.fiber = (*pool)[i].get();
      t.index.thread_idx = {i % block.x, (i / block.x) % block.y, i / (block.x * block.y)};
      t.index.block_dim = block;
      t.index.grid_dim = grid;
    }
  }

  void RunBlock(uint3 block_idx) {
    TsanAcquire(&block_end_sync);  // the previous block's shared memory accesses
    for (const auto& [begin, end] : Shared().ranges) std::memset(begin, 0xFF, end - begin);
    TsanRelease(&block_start_sync);
    for (Thread& t : threads_) {
      t.index.block_idx = block_idx;
      t.state = State::kRunnable;
      t.fiber->Reset(&Entry, &t);
    }
    std::mt19937 rng(options_.seed ^ (block_idx.x * 2654435761u) ^ (block_idx.y * 40503u) ^
                     block_idx.z);
    for (barrier_instance_ = 0;; ++barrier_instance_) {
      for (uint32_t i : Ordered(static_cast<uint32_t>(threads_.size()), options_, rng)) {
        Thread& t = threads_[i];
        if (t.state != State::kRunnable) continue;
        current_thread = &t;
        t.fiber->SwitchTo();
        current_thread = nullptr;
      }
      if (!OpenBarrier()) break;
    }
    if (access_recording) EndBlockAccesses();
  }

  uint64_t barrier_instance() const { return barrier_instance_; }

 private:
  static void Entry(void* arg) {
    Thread& t = *static_cast<Thread*>(arg);
    t.fiber->OnStart();
    TsanAcquire(&block_start_sync);
    t.runner->body_();
    TsanRelease(&block_end_sync);
    t.state = State::kExited;
    t.fiber->SwitchToScheduler(/*finished=*/true);
    Fail("a finished fiber was resumed");
  }

  // Every thread now waits or has exited. Returns false when all have exited; opens the
  // barrier when all wait at one call site; anything else is barrier divergence.
  bool OpenBarrier() {
    const Thread* waiting = nullptr;
    const Thread* exited = nullptr;
    for (const Thread& t : threads_) {
      if (t.state == State::kExited) {
        exited = &t;
        continue;
      }
      if (waiting == nullptr) {
        waiting = &t;
      } else if (t.barrier_line != waiting->barrier_line ||
                 std::strcmp(t.barrier_file, waiting->barrier_file) != 0) {
        Fail("barrier divergence in block " + Str(t.index.block_idx) + ": thread " +
             Str(waiting->index.thread_idx) + " waits at " + Site(*waiting) + ", thread " +
             Str(t.index.thread_idx) + " at " + Site(t));
      }
    }
    if (waiting == nullptr) return false;
    if (exited != nullptr) {
      Fail("barrier divergence in block " + Str(exited->index.block_idx) + ": thread " +
           Str(exited->index.thread_idx) + " has exited while thread " +
           Str(waiting->index.thread_idx) + " waits at " + Site(*waiting));
    }
    for (Thread& t : threads_) t.state = State::kRunnable;
    return true;
  }

  static std::string Site(const Thread& t) {
    return std::string(t.barrier_file) + ":" + std::to_string(t.barrier_line);
  }

  const std::function<void()>& body_;
  const Options options_;
  std::vector<Thread> threads_;
  uint64_t barrier_instance_ = 0;
};

bool ValidShape(uint64_t max_threads_per_block, dim3 grid, dim3 block) {
  const uint64_t threads = uint64_t{block.x} * block.y * block.z;
  return block.x >= 1 && block.y >= 1 && block.z >= 1 && block.z <= kMaxBlockDimZ &&
         threads <= std::min(kMaxThreadsPerBlock, max_threads_per_block) && grid.x >= 1 &&
         grid.x <= kMaxGridDimX && grid.y >= 1 && grid.y <= kMaxGridDimYZ && grid.z >= 1 &&
         grid.z <= kMaxGridDimYZ;
}

void RunGrid(dim3 grid, dim3 block, const std::function<void()>& body) {
  static std::mutex* device = new std::mutex;  // one launch at a time, like one stream
  std::lock_guard<std::mutex> lock(*device);
  if (Shared().bytes > kMaxSharedBytesPerBlock) {
    Fail("__shared__ variables take " + std::to_string(Shared().bytes) +
         " bytes, above the per-block limit " + std::to_string(kMaxSharedBytesPerBlock));
  }
  const uint64_t blocks = uint64_t{grid.x} * grid.y * grid.z;
  if (blocks > kMaxHarnessBlocks) {
    Fail("a grid of " + std::to_string(blocks) + " blocks is beyond the host harness (" +
         std::to_string(kMaxHarnessBlocks) + ")");
  }
  const Options options = GetOptions();
  std::mt19937 rng(options.seed);
  BlockRunner runner(grid, block, body, options);
  std::vector<uint32_t> order = Ordered(static_cast<uint32_t>(blocks), options, rng);
  if (access_recording) {
    // The access model samples the first blocks (each token group's pattern is the same).
    std::sort(order.begin(), order.end());
    order.resize(std::min<size_t>(order.size(), kRecordedBlocks));
  }
  for (uint32_t b : order) {
    runner.RunBlock({b % grid.x, (b / grid.x) % grid.y, b / (grid.x * grid.y)});
  }
  TsanAcquire(&block_end_sync);  // the launch is complete for the host
}

}  // namespace

const ThreadIndex& CurrentThread() {
  if (current_thread == nullptr) Fail("a CUDA built-in variable was read outside a kernel");
  return current_thread->index;
}

void SyncThreads(const char* file, int line) {
  Thread* t = current_thread;
  if (t == nullptr) Fail("__syncthreads() called outside a kernel");
  const uint64_t instance = t->runner->barrier_instance();
  TsanRelease(&barrier_sync[instance % 2]);
  t->state = State::kWaiting;
  t->barrier_file = file;
  t->barrier_line = line;
  t->fiber->SwitchToScheduler(/*finished=*/false);
  TsanAcquire(&barrier_sync[instance % 2]);
}

void CheckAligned(const void* address, size_t alignment, const char* access) {
  if (reinterpret_cast<uintptr_t>(address) % alignment == 0) return;
  const Thread* t = current_thread;
  Fail(std::string("misaligned ") + access + " of " + std::to_string(alignment) +
       " bytes at " + std::to_string(reinterpret_cast<uintptr_t>(address)) +
       (t != nullptr ? " by thread " + Str(t->index.thread_idx) + " of block " +
                           Str(t->index.block_idx)
                     : std::string()));
}

bool RegisterSharedMemory(char* begin, char* end) {
  if (begin == nullptr || end <= begin) return true;
  SharedSections& shared = Shared();
  const std::pair<char*, char*> range(begin, end);
  if (std::find(shared.ranges.begin(), shared.ranges.end(), range) == shared.ranges.end()) {
    shared.ranges.push_back(range);
    shared.bytes += static_cast<size_t>(end - begin);
  }
  return true;
}

bool IsSharedMemory(const void* address) {
  const char* a = static_cast<const char*>(address);
  for (const auto& [begin, end] : Shared().ranges) {
    if (a >= begin && a < end) return true;
  }
  return false;
}

Options GetOptions() { return MutableOptions(); }

void SetOptions(const Options& options) { MutableOptions() = options; }

cudaError_t Launch(int max_threads_per_block, dim3 grid, dim3 block, cudaStream_t stream,
                   std::function<void()> thread_body) {
  if (max_threads_per_block < 1 || !ValidShape(max_threads_per_block, grid, block)) {
    return cudaErrorInvalidConfiguration;
  }
  Capture& capture = CurrentCapture();
  if (capture.active && capture.stream == stream) {
    capture.launches.push_back(
        [grid, block, body = std::move(thread_body)] { RunGrid(grid, block, body); });
    return cudaSuccess;
  }
  RunGrid(grid, block, thread_body);
  return cudaSuccess;
}

void BeginCapture(cudaStream_t stream) {
  Capture& capture = CurrentCapture();
  if (capture.active) Fail("a capture is already active");
  capture = {stream, true, {}};
}

std::vector<std::function<void()>> EndCapture(cudaStream_t stream) {
  Capture& capture = CurrentCapture();
  if (!capture.active || capture.stream != stream) Fail("EndCapture without BeginCapture");
  capture.active = false;
  return std::move(capture.launches);
}

}  // namespace mrope_host

// The one CUDA runtime call the kernel's host code makes (the harness links no cudart).
extern "C" const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
    default:
      return "error (host execution harness)";
  }
}
