#ifndef MROPE_KERNELS_HOST_HARNESS_FIBER_H_
#define MROPE_KERNELS_HOST_HARNESS_FIBER_H_

// Fibers for the host execution harness: each CUDA thread of a block runs on its own stack and
// switches to the scheduler (the launching thread) at every __syncthreads() and when it ends.
// The switch is a few instructions of x86-64 assembly (no signal-mask system call, unlike
// swapcontext), which keeps a 1000-block launch of 256 threads in the tens of milliseconds.
//
// Sanitizers are told about every switch when their runtime is linked (detected at run time):
// AddressSanitizer through __sanitizer_{start,finish}_switch_fiber, ThreadSanitizer through
// its fiber API with no implied synchronisation, so that only the harness's explicit barrier
// edges (TsanRelease / TsanAcquire) order the accesses of different CUDA threads.

#include <cstddef>

namespace mrope_host {

class Fiber {
 public:
  explicit Fiber(size_t stack_bytes);
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Makes the next SwitchTo() start entry(arg) afresh at the top of the stack. entry must
  // end with SwitchToScheduler(/*finished=*/true) instead of returning.
  void Reset(void (*entry)(void*), void* arg);

  // Scheduler side: runs this fiber until it switches back.
  void SwitchTo();

  // Fiber side: returns control to the scheduler; `finished` when the fiber will never be
  // resumed (until the next Reset).
  void SwitchToScheduler(bool finished);

  // Fiber side: first call of the entry function, before anything else.
  void OnStart();

 private:
  void* stack_ = nullptr;
  size_t stack_bytes_ = 0;
  void* sp_ = nullptr;            // saved stack pointer of the fiber while it is switched out
  void* scheduler_sp_ = nullptr;  // saved stack pointer of the scheduler while the fiber runs
  void* tsan_fiber_ = nullptr;
  void* tsan_scheduler_ = nullptr;
  void* asan_fake_stack_ = nullptr;
  const void* scheduler_stack_bottom_ = nullptr;
  size_t scheduler_stack_size_ = 0;
};

// ThreadSanitizer synchronisation edges (no-ops without the TSan runtime).
void TsanRelease(void* sync);
void TsanAcquire(void* sync);

}  // namespace mrope_host

#endif  // MROPE_KERNELS_HOST_HARNESS_FIBER_H_
