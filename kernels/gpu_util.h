#ifndef MROPE_KERNELS_GPU_UTIL_H_
#define MROPE_KERNELS_GPU_UTIL_H_

// CUDA runtime helpers for the kernel tests and the benchmark, behind a plain C++ header so
// that their .cc files need no CUDA headers. Any failing CUDA call aborts with its name and
// error string: this is support code for test and benchmark binaries only.

#include <cstddef>
#include <functional>
#include <string>

#include "kernels/mrope_kernel_args.h"

namespace mrope {
namespace gpu_util {

// Number of CUDA devices; 0 when the runtime reports none or fails (no driver, no GPU, a
// driver older than the toolkit), and then *reason (if not null) says why, with the CUDA error.
int DeviceCount(std::string* reason = nullptr);

// The thread's CUDA last-error state, for tests of launch error reporting:
// ProvokeUnrelatedError makes a runtime call fail (an impossible allocation) and returns its
// error code; TakeLastError returns and clears the state (cudaGetLastError).
int ProvokeUnrelatedError();
int TakeLastError();

// Name of the current device, e.g. "NVIDIA H100 80GB HBM3".
std::string DeviceName();

// Waits for all work on the device.
void Synchronize();

// cudaMalloc'd memory, freed on destruction.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* As() const {
    return static_cast<T*>(data_);
  }

  void Upload(const void* host, size_t bytes);    // synchronous
  void Download(void* host, size_t bytes) const;  // synchronous
  void Zero();                                    // synchronous

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// A non-blocking stream, destroyed with the object.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  GpuStream get() const { return stream_; }
  void Synchronize() const;

 private:
  GpuStream stream_ = nullptr;
};

// Device-to-device cudaMemcpyAsync.
void CopyAsync(void* dst, const void* src, size_t bytes, GpuStream stream);

// Times work enqueued on a stream with a pair of CUDA events.
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  void Start(GpuStream stream);
  // Records the stop event, waits for it and returns the elapsed milliseconds.
  float StopMs(GpuStream stream);

 private:
  void* start_ = nullptr;  // cudaEvent_t
  void* stop_ = nullptr;
};

// A CUDA graph captured from `enqueue(stream)` on `stream` and instantiated; Launch replays it.
// For the benchmark's graph rows (GPU builds only: the host harness does not provide it).
class CapturedGraph {
 public:
  CapturedGraph(GpuStream stream, const std::function<void(GpuStream)>& enqueue);
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  void Launch(GpuStream stream);

 private:
  void* graph_ = nullptr;  // cudaGraph_t
  void* exec_ = nullptr;   // cudaGraphExec_t
};

// Captures `enqueue(stream)` into a CUDA graph on a fresh stream, instantiates it, launches it
// `replays` times and waits. Returns "" on success, else what failed.
std::string CaptureAndReplay(const std::function<void(GpuStream)>& enqueue, int replays);

}  // namespace gpu_util
}  // namespace mrope

#endif  // MROPE_KERNELS_GPU_UTIL_H_
