#include "kernels/host_harness/fiber.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#if !defined(__x86_64__)
#error "the host execution harness's context switch is written for x86-64"
#endif

// Sanitizer runtime entry points, weak so that the harness links without them and asks at run
// time whether the runtime is there.
extern "C" {
__attribute__((weak)) void __sanitizer_start_switch_fiber(void** fake_stack_save,
                                                          const void* bottom, size_t size);
__attribute__((weak)) void __sanitizer_finish_switch_fiber(void* fake_stack_save,
                                                           const void** bottom_old,
                                                           size_t* size_old);
__attribute__((weak)) void __asan_unpoison_memory_region(const volatile void* addr, size_t size);
__attribute__((weak)) void* __tsan_get_current_fiber();
__attribute__((weak)) void* __tsan_create_fiber(unsigned flags);
__attribute__((weak)) void __tsan_destroy_fiber(void* fiber);
__attribute__((weak)) void __tsan_switch_to_fiber(void* fiber, unsigned flags);
__attribute__((weak)) void __tsan_acquire(void* addr);
__attribute__((weak)) void __tsan_release(void* addr);

// Saves the callee-saved registers on the current stack, stores the stack pointer in
// *save_sp, loads load_sp and restores the registers saved there.
void mrope_host_switch_context(void** save_sp, void* load_sp);
// First frame of a fiber: calls r13(r12) (set up by Fiber::Reset).
void mrope_host_fiber_trampoline();
}

asm(R"(
  .text
  .globl mrope_host_switch_context
  .type mrope_host_switch_context, @function
mrope_host_switch_context:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size mrope_host_switch_context, .-mrope_host_switch_context

  .globl mrope_host_fiber_trampoline
  .type mrope_host_fiber_trampoline, @function
mrope_host_fiber_trampoline:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size mrope_host_fiber_trampoline, .-mrope_host_fiber_trampoline
)");

namespace mrope_host {
namespace {

constexpr unsigned kTsanSwitchNoSync = 1;  // __tsan_switch_to_fiber_no_sync

bool HaveAsan() { return __sanitizer_start_switch_fiber != nullptr; }
bool HaveTsan() { return __tsan_create_fiber != nullptr; }

}  // namespace

Fiber::Fiber(size_t stack_bytes) : stack_bytes_(stack_bytes) {
  stack_ = mmap(nullptr, stack_bytes_, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (stack_ == MAP_FAILED) {
    std::perror("mrope host harness: fiber stack mmap");
    std::abort();
  }
  if (HaveTsan()) tsan_fiber_ = __tsan_create_fiber(0);
}

Fiber::~Fiber() {
  if (tsan_fiber_ != nullptr) __tsan_destroy_fiber(tsan_fiber_);
  munmap(stack_, stack_bytes_);
}

void Fiber::Reset(void (*entry)(void*), void* arg) {
  // A fiber that ended never unwound its frames: clear their stale ASan redzones.
  if (__asan_unpoison_memory_region != nullptr) {
    __asan_unpoison_memory_region(stack_, stack_bytes_);
  }
  // Seven words popped by mrope_host_switch_context: r15, r14, r13, r12, rbx, rbp, return
  // address. The stack pointer is 16-byte aligned after the `ret`, as the trampoline's call
  // requires.
  const uintptr_t top = (reinterpret_cast<uintptr_t>(stack_) + stack_bytes_) & ~uintptr_t{15};
  void** frame = reinterpret_cast<void**>(top - 7 * sizeof(void*));
  frame[0] = nullptr;                                            // r15
  frame[1] = nullptr;                                            // r14
  frame[2] = reinterpret_cast<void*>(entry);                     // r13
  frame[3] = arg;                                                // r12
  frame[4] = nullptr;                                            // rbx
  frame[5] = nullptr;                                            // rbp: ends frame-pointer walks
  frame[6] = reinterpret_cast<void*>(&mrope_host_fiber_trampoline);  // return address
  sp_ = frame;
}

void Fiber::SwitchTo() {
  void* scheduler_fake_stack = nullptr;
  if (HaveAsan()) __sanitizer_start_switch_fiber(&scheduler_fake_stack, stack_, stack_bytes_);
  if (HaveTsan()) {
    tsan_scheduler_ = __tsan_get_current_fiber();
    __tsan_switch_to_fiber(tsan_fiber_, kTsanSwitchNoSync);
  }
  mrope_host_switch_context(&scheduler_sp_, sp_);
  if (HaveAsan()) __sanitizer_finish_switch_fiber(scheduler_fake_stack, nullptr, nullptr);
}

void Fiber::OnStart() {
  if (HaveAsan()) {
    __sanitizer_finish_switch_fiber(nullptr, &scheduler_stack_bottom_, &scheduler_stack_size_);
  }
}

void Fiber::SwitchToScheduler(bool finished) {
  if (HaveAsan()) {
    // A finished fiber passes no fake-stack slot: ASan then frees its fake frames.
    __sanitizer_start_switch_fiber(finished ? nullptr : &asan_fake_stack_,
                                   scheduler_stack_bottom_, scheduler_stack_size_);
  }
  if (HaveTsan()) __tsan_switch_to_fiber(tsan_scheduler_, kTsanSwitchNoSync);
  mrope_host_switch_context(&sp_, scheduler_sp_);
  if (HaveAsan()) {
    __sanitizer_finish_switch_fiber(asan_fake_stack_, &scheduler_stack_bottom_,
                                    &scheduler_stack_size_);
  }
}

void TsanRelease(void* sync) {
  if (__tsan_release != nullptr) __tsan_release(sync);
}

void TsanAcquire(void* sync) {
  if (__tsan_acquire != nullptr) __tsan_acquire(sync);
}

}  // namespace mrope_host
