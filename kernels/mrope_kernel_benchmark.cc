// Benchmark of the M-RoPE kernel against the memory-bandwidth ceiling and an eager-PyTorch
// style baseline. Run on a GPU (see kernels/BENCHMARKS.md):
//   bazel run -c opt //kernels:mrope_kernel_benchmark -- --benchmark_counters_tabular=true
// Without a GPU it prints a message and exits 0.
//
// Per model shape and token count T, in one run:
//   copy/...        cudaMemcpyAsync device-to-device of the q+k bytes (the ceiling)
//   copy_graph/...  the same copies replayed from a CUDA graph (T <= kMaxGraphTokens)
//   mrope/...       LaunchMropeKernel, cos/sin from inv_freq (q, k: slices of a fused qkv)
//   mrope_table/... LaunchMropeKernel with an fp32 cos/sin table
//   mrope_graph/... as mrope, replayed from a CUDA graph (T <= kMaxGraphTokens: decode and
//                   small prefill, where a stream of launches times the host, not the GPU)
//   eager/...       eager_baseline.h: gather + weave + 14 elementwise kernels
// Counters: us (per call), GB_per_s (2 * q+k bytes per call: read + write, the same for all
// four so they compare directly) and pct_of_copy (copy time / this time * 100).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/bench_util.h"
#include "kernels/eager_baseline.h"
#include "kernels/gpu_util.h"
#include "kernels/mrope_kernel.h"
#include "mrope/rotary/cos_sin_table.h"
#include "mrope/rotary/half_float.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {
namespace {

using gpu_util::DeviceBuffer;

using bench_util::kHeadDim;
using bench_util::ModelShape;

constexpr ModelShape kModels[] = {bench_util::kQwen2Vl7B, bench_util::kQwen3Vl8B,
                                   bench_util::kQwen25Vl72B, bench_util::kHunYuanVl};
constexpr int64_t kTokenCounts[] = {1, 16, 256, 1024, 8192, 65536};
constexpr int64_t kTableRows = 131072;  // > every benchmark position
constexpr int64_t kMaxGraphTokens = 1024;

// The fp32 cos/sin table of a model, built once (host double sincos takes a while).
const CosSinTable& TableFor(const ModelShape& m) {
  static auto* tables = new std::map<std::string, CosSinTable>;
  auto it = tables->find(m.name);
  if (it == tables->end()) {
    const RotarySpec spec = bench_util::MakeSpec(m);
    it = tables
             ->emplace(
                 m.name,
                 CosSinTable::Create(spec.inv_freq, spec.attention_scaling, kTableRows).value())
             .first;
  }
  return it->second;
}

int64_t QkBytes(const ModelShape& m, int64_t tokens) {
  return tokens * (m.hq + m.hk) * kHeadDim * 2;  // bf16
}

// Copy time per (model, T, from a graph), measured by the copy benchmarks that run first for
// each shape.
std::map<std::tuple<std::string, int64_t, bool>, double>& CopyMicros() {
  static auto* copy_us = new std::map<std::tuple<std::string, int64_t, bool>, double>;
  return *copy_us;
}

double KnownCopyMicros(const ModelShape& m, int64_t tokens, bool graph) {
  const auto it = CopyMicros().find({m.name, tokens, graph});
  return it == CopyMicros().end() ? 0 : it->second;
}

void BM_Copy(benchmark::State& state, const ModelShape& m, int64_t tokens, bool graph) {
  const int64_t bytes = QkBytes(m, tokens);
  DeviceBuffer src(bytes);
  DeviceBuffer dst(bytes);
  src.Zero();
  CopyMicros()[{m.name, tokens, graph}] =
      bench_util::TimeLaunches(state, 2 * bytes, 0, graph, [&](GpuStream stream) {
        gpu_util::CopyAsync(dst.data(), src.data(), bytes, stream);
      });
  state.counters["pct_of_copy"] = 100.0;
}

enum class MropeVariant { kInvFreq, kTable, kGraph };

// The kernel on q and k sliced from a fused qkv buffer: cos/sin from inv_freq or a table,
// launched on a stream or replayed from a graph of kLaunchesPerGraph launches.
void BM_Mrope(benchmark::State& state, const ModelShape& m, int64_t tokens,
              MropeVariant variant) {
  const RotarySpec spec = bench_util::MakeSpec(m);
  const int64_t token_stride = int64_t{m.hq + 2 * m.hk} * kHeadDim;
  DeviceBuffer qkv(tokens * token_stride * 2);
  qkv.Zero();
  const std::vector<int64_t> positions =
      bench_util::VideoPositions(tokens, bench_util::NumAxes(m));
  DeviceBuffer d_positions(positions.size() * sizeof(int64_t));
  d_positions.Upload(positions.data(), positions.size() * sizeof(int64_t));
  DeviceBuffer flag(sizeof(int));
  flag.Zero();

  MropeKernelArgs args;
  args.q = {qkv.data(), DType::kBFloat16, tokens, m.hq, kHeadDim, token_stride, kHeadDim};
  args.k = {qkv.As<uint16_t>() + int64_t{m.hq} * kHeadDim,
            DType::kBFloat16,
            tokens,
            m.hk,
            kHeadDim,
            token_stride,
            kHeadDim};
  args.positions = {d_positions.data(), true, tokens, tokens};
  args.error_flag = flag.As<int>();

  std::unique_ptr<DeviceBuffer> d_cos, d_sin;
  if (variant == MropeVariant::kTable) {
    const CosSinTable& table = TableFor(m);
    d_cos = std::make_unique<DeviceBuffer>(table.cos().size() * sizeof(float));
    d_cos->Upload(table.cos().data(), table.cos().size() * sizeof(float));
    d_sin = std::make_unique<DeviceBuffer>(table.sin().size() * sizeof(float));
    d_sin->Upload(table.sin().data(), table.sin().size() * sizeof(float));
    args.table = {d_cos->As<float>(), d_sin->As<float>(), kTableRows, kHeadDim / 2};
  }

  const bool graph = variant == MropeVariant::kGraph;
  bool ok = true;
  bench_util::TimeLaunches(state, 2 * QkBytes(m, tokens), KnownCopyMicros(m, tokens, graph), graph,
               [&](GpuStream s) { ok = ok && LaunchMropeKernel(spec, args, s).ok(); });
  int error_flag = 0;
  flag.Download(&error_flag, sizeof(error_flag));
  if (!ok || error_flag != 0) state.SkipWithError("kernel launch failed or raised an error");
}

void BM_Eager(benchmark::State& state, const ModelShape& m, int64_t tokens) {
  const int d = kHeadDim;
  const int half = d / 2;
  const int64_t max_heads = std::max(m.hq, m.hk);
  DeviceBuffer q(tokens * m.hq * d * 2), k(tokens * m.hk * d * 2);
  DeviceBuffer q_out(tokens * m.hq * d * 2), k_out(tokens * m.hk * d * 2);
  q.Zero();
  k.Zero();
  DeviceBuffer gathered(3 * tokens * d * 2), cos(tokens * half * 2), sin(tokens * half * 2);
  std::vector<DeviceBuffer> temporaries;
  for (int i = 0; i < 6; ++i) temporaries.emplace_back(tokens * max_heads * half * 2);

  const RotarySpec spec = bench_util::MakeSpec(m);
  const CosSinTable& table = TableFor(m);
  std::vector<uint16_t> cache(kTableRows * d);  // bf16 [max_position][D]: cos | sin
  for (int64_t p = 0; p < kTableRows; ++p) {
    for (int j = 0; j < half; ++j) {
      cache[p * d + j] = FloatToBFloat16(table.cos()[p * half + j]);
      cache[p * d + half + j] = FloatToBFloat16(table.sin()[p * half + j]);
    }
  }
  DeviceBuffer d_cache(cache.size() * 2);
  d_cache.Upload(cache.data(), cache.size() * 2);
  DeviceBuffer d_axis(half);
  d_axis.Upload(spec.axis_map.axis, half);
  const std::vector<int64_t> positions = bench_util::VideoPositions(tokens);
  DeviceBuffer d_positions(positions.size() * sizeof(int64_t));
  d_positions.Upload(positions.data(), positions.size() * sizeof(int64_t));

  eager_baseline::EagerArgs args;
  args.q = q.data();
  args.k = k.data();
  args.q_out = q_out.data();
  args.k_out = k_out.data();
  args.positions = d_positions.As<int64_t>();
  args.cos_sin_cache = d_cache.data();
  args.pair_axis = d_axis.As<uint8_t>();
  args.num_tokens = tokens;
  args.num_q_heads = m.hq;
  args.num_k_heads = m.hk;
  args.head_dim = d;
  args.scratch.gathered = gathered.data();
  args.scratch.cos = cos.data();
  args.scratch.sin = sin.data();
  for (int i = 0; i < 4; ++i) args.scratch.products[i] = temporaries[i].data();
  for (int i = 0; i < 2; ++i) args.scratch.halves[i] = temporaries[4 + i].data();

  bench_util::TimeLaunches(state, 2 * QkBytes(m, tokens), KnownCopyMicros(m, tokens, false), false,
               [&](GpuStream stream) { eager_baseline::EnqueueEagerMrope(args, stream); });
}

void RegisterAll() {
  for (const ModelShape& m : kModels) {
    for (const int64_t tokens : kTokenCounts) {
      const std::string suffix = std::string(m.name) + "/T:" + std::to_string(tokens);
      const auto configure = [](benchmark::internal::Benchmark* b) {
        b->UseManualTime()->Iterations(bench_util::kIterations)->Unit(benchmark::kMicrosecond);
      };
      const bool graph_rows = tokens <= kMaxGraphTokens;
      configure(
          benchmark::RegisterBenchmark(("copy/" + suffix).c_str(), BM_Copy, m, tokens, false));
      if (graph_rows) {
        configure(benchmark::RegisterBenchmark(("copy_graph/" + suffix).c_str(), BM_Copy, m,
                                               tokens, true));
      }
      configure(benchmark::RegisterBenchmark(("mrope/" + suffix).c_str(), BM_Mrope, m, tokens,
                                             MropeVariant::kInvFreq));
      configure(benchmark::RegisterBenchmark(("mrope_table/" + suffix).c_str(), BM_Mrope, m, tokens,
                                             MropeVariant::kTable));
      if (graph_rows) {
        configure(benchmark::RegisterBenchmark(("mrope_graph/" + suffix).c_str(), BM_Mrope, m,
                                               tokens, MropeVariant::kGraph));
      }
      if (m.xd_axes == 0) {  // the eager chain is three-axis M-RoPE's
        configure(benchmark::RegisterBenchmark(("eager/" + suffix).c_str(), BM_Eager, m, tokens));
      }
    }
  }
}

}  // namespace
}  // namespace mrope

int main(int argc, char** argv) {
  return mrope::bench_util::RunBenchmarks(argc, argv, "mrope_kernel_benchmark", mrope::RegisterAll);
}
