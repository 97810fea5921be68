#ifndef MROPE_KERNELS_HOST_HARNESS_ACCESS_MODEL_H_
#define MROPE_KERNELS_HOST_HARNESS_ACCESS_MODEL_H_

// The host execution harness's access model: what the memory system of a GPU would see of a
// kernel's global and shared memory accesses, from the kernel's own source run thread by
// thread. Every access of the kernels goes through Load/Store (kernels/mrope_device.cuh), which
// pass their call site here while recording is on. Accesses are grouped as a GPU issues them:
// per warp (32 consecutive threads of the block) and per dynamic instance of each site (the
// n-th execution of that site by each thread, so that the lanes of a warp line up). Per group:
//  - global memory: the distinct bytes requested, the 32-byte sectors and 128-byte lines
//    touched (sector efficiency = requested / (32 * sectors));
//  - shared memory: bank-conflict ways, the most distinct 4-byte words in one of the 32 banks
//    within one phase of the access (32 lanes for accesses of up to 4 bytes, 16 for 8 bytes,
//    8 for 16 bytes); lanes reading one word share it (broadcast).
// Per named global buffer: the bytes read more than once in the recording.
// While recording, a launch runs only its first kRecordedBlocks blocks (by linear index): a
// CPU takes minutes for a whole prefill launch, and every token group repeats one pattern. Its
// results are then incomplete: recording is for the access report, not for tests of values.
// Recording is off by default; the kernels' accesses then cost one predicted branch.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mrope_host {

// Read by every Load/Store of a kernel compiled for the harness.
inline bool access_recording = false;
inline constexpr size_t kRecordedBlocks = 8;

// Records one access of the running kernel thread (cuda_host_prelude.h).
void RecordAccess(const void* address, size_t bytes, bool is_store, const char* file, int line);

// One access site (file:line; loads and stores apart), summed over its warp-wide requests.
struct SiteStats {
  std::string site;  // "fused_kernel.cu:212"
  bool store = false;
  bool shared = false;   // shared memory (else global memory or kernel parameters)
  std::string buffers;   // the named buffers it touched, comma-separated; "params" for none
  uint64_t requests = 0;         // warp-wide instances
  uint64_t requested_bytes = 0;  // distinct bytes the lanes of each request asked for
  uint64_t sectors = 0;          // 32-byte sectors touched, summed over the requests
  uint64_t lines = 0;            // 128-byte lines touched, summed over the requests
  int max_ways = 0;              // shared: the worst bank conflict of any request (1: none)
  double SectorEfficiency() const {
    return sectors == 0 ? 1.0 : static_cast<double>(requested_bytes) / (32.0 * sectors);
  }
};

// One named global buffer over a recording.
struct BufferStats {
  std::string name;
  uint64_t bytes = 0;
  uint64_t bytes_read = 0;      // distinct bytes read
  uint64_t bytes_reread = 0;    // bytes read more than once
  uint64_t bytes_written = 0;   // distinct bytes written
};

struct AccessReport {
  std::vector<SiteStats> sites;  // in order of site
  std::vector<BufferStats> buffers;
};

// Names a global buffer for the report (until ForgetBuffers).
void NameBuffer(const void* data, size_t bytes, const std::string& name);
void ForgetBuffers();

// Starts recording (clearing what the last recording saw); FinishRecording stops it and
// returns what the launches in between did.
void StartRecording();
AccessReport FinishRecording();

// host_runtime.cc: every thread of the block that ran has exited.
void EndBlockAccesses();

}  // namespace mrope_host

#endif  // MROPE_KERNELS_HOST_HARNESS_ACCESS_MODEL_H_
