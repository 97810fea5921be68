#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>

#include "kernels/gpu_util.h"

namespace mrope {
namespace gpu_util {
namespace {

void Check(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return;
  std::fprintf(stderr, "CUDA call %s failed: %s\n", call, cudaGetErrorString(error));
  std::abort();
}

// Captures `enqueue(stream)` into *graph and instantiates it into *exec: the one sequence under
// CapturedGraph (which aborts on failure) and CaptureAndReplay (which reports it). On failure
// returns the error and names the failing call in *call; *graph and *exec keep what was created,
// for the caller to destroy.
cudaError_t CaptureGraph(cudaStream_t stream, const std::function<void(GpuStream)>& enqueue,
                         cudaGraph_t* graph, cudaGraphExec_t* exec, const char** call) {
  *call = "cudaStreamBeginCapture";
  cudaError_t error = cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  if (error != cudaSuccess) return error;
  enqueue(stream);
  *call = "cudaStreamEndCapture";
  error = cudaStreamEndCapture(stream, graph);
  if (error != cudaSuccess) return error;
  *call = "cudaGraphInstantiate";
  return cudaGraphInstantiate(exec, *graph, 0);
}

}  // namespace

int DeviceCount(std::string* reason) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();  // clear the error for later callers
    count = 0;
  }
  if (count == 0 && reason != nullptr) {
    *reason = error != cudaSuccess ? std::string("cudaGetDeviceCount failed: ") +
                                         cudaGetErrorName(error) + " (" +
                                         cudaGetErrorString(error) + ")"
                                   : "cudaGetDeviceCount found no CUDA device";
  }
  return count;
}

int ProvokeUnrelatedError() {
  void* never = nullptr;
  return static_cast<int>(cudaMalloc(&never, size_t{1} << 62));
}

int TakeLastError() { return static_cast<int>(cudaGetLastError()); }

std::string DeviceName() {
  int device = 0;
  Check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp prop;
  Check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  return prop.name;
}

void Synchronize() { Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  Check(cudaMalloc(&data_, bytes == 0 ? 1 : bytes), "cudaMalloc");
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) Check(cudaFree(data_), "cudaFree");
}

void DeviceBuffer::Upload(const void* host, size_t bytes) {
  if (bytes > bytes_) Check(cudaErrorInvalidValue, "DeviceBuffer::Upload (too many bytes)");
  Check(cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy host to device");
}

void DeviceBuffer::Download(void* host, size_t bytes) const {
  if (bytes > bytes_) Check(cudaErrorInvalidValue, "DeviceBuffer::Download (too many bytes)");
  Check(cudaMemcpy(host, data_, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy device to host");
}

void DeviceBuffer::Zero() { Check(cudaMemset(data_, 0, bytes_), "cudaMemset"); }

Stream::Stream() {
  Check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

Stream::~Stream() { Check(cudaStreamDestroy(stream_), "cudaStreamDestroy"); }

void Stream::Synchronize() const { Check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

void CopyAsync(void* dst, const void* src, size_t bytes, GpuStream stream) {
  Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
}

EventTimer::EventTimer() {
  cudaEvent_t start, stop;
  Check(cudaEventCreate(&start), "cudaEventCreate");
  Check(cudaEventCreate(&stop), "cudaEventCreate");
  start_ = start;
  stop_ = stop;
}

EventTimer::~EventTimer() {
  Check(cudaEventDestroy(static_cast<cudaEvent_t>(start_)), "cudaEventDestroy");
  Check(cudaEventDestroy(static_cast<cudaEvent_t>(stop_)), "cudaEventDestroy");
}

void EventTimer::Start(GpuStream stream) {
  Check(cudaEventRecord(static_cast<cudaEvent_t>(start_), stream), "cudaEventRecord");
}

float EventTimer::StopMs(GpuStream stream) {
  Check(cudaEventRecord(static_cast<cudaEvent_t>(stop_), stream), "cudaEventRecord");
  Check(cudaEventSynchronize(static_cast<cudaEvent_t>(stop_)), "cudaEventSynchronize");
  float ms = 0;
  Check(
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start_), static_cast<cudaEvent_t>(stop_)),
      "cudaEventElapsedTime");
  return ms;
}

CapturedGraph::CapturedGraph(GpuStream stream, const std::function<void(GpuStream)>& enqueue) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  const char* call = "";
  const cudaError_t error = CaptureGraph(stream, enqueue, &graph, &exec, &call);
  Check(error, call);
  graph_ = graph;
  exec_ = exec;
}

CapturedGraph::~CapturedGraph() {
  Check(cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_)), "cudaGraphExecDestroy");
  Check(cudaGraphDestroy(static_cast<cudaGraph_t>(graph_)), "cudaGraphDestroy");
}

void CapturedGraph::Launch(GpuStream stream) {
  Check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec_), stream), "cudaGraphLaunch");
}

std::string CaptureAndReplay(const std::function<void(GpuStream)>& enqueue, int replays) {
  Stream stream;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  const char* call = "";
  cudaError_t error = CaptureGraph(stream.get(), enqueue, &graph, &exec, &call);
  const std::string failed = error != cudaSuccess ? call : "graph replay";
  for (int i = 0; error == cudaSuccess && i < replays; ++i) {
    error = cudaGraphLaunch(exec, stream.get());
  }
  if (error == cudaSuccess) error = cudaStreamSynchronize(stream.get());
  if (exec != nullptr) Check(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
  if (graph != nullptr) Check(cudaGraphDestroy(graph), "cudaGraphDestroy");
  return error == cudaSuccess ? "" : failed + ": " + cudaGetErrorString(error);
}

}  // namespace gpu_util
}  // namespace mrope
