// kernels/gpu_util.h on the host, for the kernel tests run by the host execution harness:
// "device" memory is host memory of the exact requested size (so AddressSanitizer sees any
// access past a buffer), launches complete before they return, and graph capture records
// launches and replays them (host_runtime.h).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>

#include "kernels/gpu_util.h"
#include "kernels/host_harness/host_runtime.h"

namespace mrope {
namespace gpu_util {
namespace {

// cudaMalloc's alignment.
constexpr size_t kDeviceAlignment = 256;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "mrope host harness gpu_util: %s\n", what);
  std::abort();
}

int last_error = 0;

}  // namespace

int DeviceCount(std::string*) { return 1; }

std::string DeviceName() { return "mrope host execution harness (CPU fibers)"; }

int ProvokeUnrelatedError() {
  last_error = static_cast<int>(cudaErrorMemoryAllocation);
  return last_error;
}

int TakeLastError() { return std::exchange(last_error, 0); }

void Synchronize() {}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (posix_memalign(&data_, kDeviceAlignment, bytes == 0 ? 1 : bytes) != 0) {
    Fail("posix_memalign failed");
  }
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer::~DeviceBuffer() { std::free(data_); }

void DeviceBuffer::Upload(const void* host, size_t bytes) {
  if (bytes > bytes_) Fail("DeviceBuffer::Upload (too many bytes)");
  std::memcpy(data_, host, bytes);
}

void DeviceBuffer::Download(void* host, size_t bytes) const {
  if (bytes > bytes_) Fail("DeviceBuffer::Download (too many bytes)");
  std::memcpy(host, data_, bytes);
}

void DeviceBuffer::Zero() { std::memset(data_, 0, bytes_); }

// A stream is only an identity here (launches run synchronously).
Stream::Stream() : stream_(reinterpret_cast<GpuStream>(new char)) {}

Stream::~Stream() { delete reinterpret_cast<char*>(stream_); }

void Stream::Synchronize() const {}

void CopyAsync(void* dst, const void* src, size_t bytes, GpuStream) {
  std::memmove(dst, src, bytes);
}

EventTimer::EventTimer() : start_(new std::chrono::steady_clock::time_point) {}

EventTimer::~EventTimer() { delete static_cast<std::chrono::steady_clock::time_point*>(start_); }

void EventTimer::Start(GpuStream) {
  *static_cast<std::chrono::steady_clock::time_point*>(start_) = std::chrono::steady_clock::now();
}

float EventTimer::StopMs(GpuStream) {
  const auto start = *static_cast<std::chrono::steady_clock::time_point*>(start_);
  return std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string CaptureAndReplay(const std::function<void(GpuStream)>& enqueue, int replays) {
  Stream stream;
  mrope_host::BeginCapture(stream.get());
  enqueue(stream.get());
  const std::vector<std::function<void()>> graph = mrope_host::EndCapture(stream.get());
  for (int i = 0; i < replays; ++i) {
    for (const std::function<void()>& launch : graph) launch();
  }
  return "";
}

}  // namespace gpu_util
}  // namespace mrope
