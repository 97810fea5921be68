#ifndef MROPE_KERNELS_BENCH_UTIL_H_
#define MROPE_KERNELS_BENCH_UTIL_H_

// What the kernel benchmarks (mrope_kernel_benchmark, fused_kernel_benchmark) share: their
// model shapes, rotary spec and positions (bench_shapes.h), and how they time a call: CUDA events around
// batches of back-to-back calls on one stream (a batch moves about 2 GB, 3 to 200 calls), or
// around replays of a CUDA graph of kLaunchesPerGraph captured launches.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/bench_shapes.h"
#include "kernels/gpu_util.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {
namespace bench_util {

inline constexpr int kIterations = 20;
inline constexpr int kLaunchesPerGraph = 100;

// Times `enqueue` (`calls` calls) in batches; reports us, GB_per_s and pct_of_copy (if known)
// per call.
template <typename Enqueue>
inline double TimeCalls(benchmark::State& state, gpu_util::Stream& stream, int64_t traffic_bytes,
                 double copy_us, Enqueue enqueue, int calls = 1) {
  const int batch = static_cast<int>(
      std::clamp<int64_t>(int64_t{2000000000} / std::max<int64_t>(traffic_bytes * calls, 1), 3,
                          200));
  gpu_util::EventTimer timer;
  for (int i = 0; i < batch; ++i) enqueue();  // warm-up
  stream.Synchronize();
  double total_us = 0;
  for (auto _ : state) {
    timer.Start(stream.get());
    for (int i = 0; i < batch; ++i) enqueue();
    const double us = 1000.0 * timer.StopMs(stream.get()) / (batch * calls);
    state.SetIterationTime(us * 1e-6);
    total_us += us;
  }
  const double us = total_us / static_cast<double>(state.iterations());
  state.counters["us"] = us;
  state.counters["GB_per_s"] = static_cast<double>(traffic_bytes) / (us * 1e3);
  if (copy_us > 0) state.counters["pct_of_copy"] = 100.0 * copy_us / us;
  return us;
}

// Times `launch(stream)` (one call) on a stream, or replayed from a graph of kLaunchesPerGraph.
template <typename Launch>
inline double TimeLaunches(benchmark::State& state, int64_t traffic_bytes, double copy_us, bool graph,
                    Launch launch) {
  gpu_util::Stream stream;
  if (!graph) return TimeCalls(state, stream, traffic_bytes, copy_us, [&] { launch(stream.get()); });
  gpu_util::CapturedGraph captured(stream.get(), [&](GpuStream s) {
    for (int i = 0; i < kLaunchesPerGraph; ++i) launch(s);
  });
  return TimeCalls(
      state, stream, traffic_bytes, copy_us, [&] { captured.Launch(stream.get()); },
      kLaunchesPerGraph);
}

// A benchmark binary's main: without a CUDA device it says so and returns 0; otherwise it
// registers the benchmarks (`register_all`) and runs those the command line selects.
inline int RunBenchmarks(int argc, char** argv, const char* binary, void (*register_all)()) {
  if (gpu_util::DeviceCount() == 0) {
    std::fprintf(stderr, "%s: no CUDA device available; nothing to measure.\n", binary);
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("device", gpu_util::DeviceName());
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace bench_util
}  // namespace mrope

#endif  // MROPE_KERNELS_BENCH_UTIL_H_
