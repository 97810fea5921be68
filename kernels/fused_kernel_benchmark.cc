// Benchmark of the fused kernel (kernels/fused_kernel.h) against a device copy of its
// compulsory bytes and against the unfused chain (kernels/unfused_chain.h). Run on a GPU (see
// kernels/BENCHMARKS.md); without one it prints a message and exits 0.
//
// Per model shape, cache format and token count T, in one run:
//   copy/...     cudaMemcpyAsync of (R + W) / 2 bytes, R = q, k, v read and W = q and the cache
//                entries written: the same traffic as the fused kernel's compulsory bytes
//   unfused/...  the chain of three launches: per-head RMSNorm of q and k, LaunchMropeKernel,
//                the cache append
//   fused/...    LaunchFusedMropeKernel: QK-RMSNorm + M-RoPE + q in place + K/V append
//   *_graph/...  copy, unfused and fused replayed from a CUDA graph (T <= kMaxGraphTokens)
// and, for the bf16 NHD cache, each step of the unfused chain against a copy of its own traffic
// (unfused_norm and unfused_rope against copy_qk, unfused_cache against copy_cache). Counters: us, GB_per_s (R + W per call),
// pct_of_copy, and x_vs_unfused on the fused rows (unfused time / fused time).

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/bench_util.h"
#include "kernels/fused_kernel.h"
#include "kernels/gpu_util.h"
#include "kernels/mrope_kernel.h"
#include "kernels/unfused_chain.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {
namespace {

using gpu_util::DeviceBuffer;

using bench_util::kHeadDim;
using bench_util::ModelShape;

constexpr int kBlockSize = 16;
constexpr ModelShape kModels[] = {bench_util::kQwen25Vl7B, bench_util::kQwen3Vl8B,
                                   bench_util::kQwen25Vl72B, bench_util::kQwen3Vl30BA3B,
                                   bench_util::kHunYuanVl};
constexpr int64_t kTokenCounts[] = {1, 16, 256, 4096, 16384, 65536};
constexpr int64_t kMaxGraphTokens = 16;

struct CacheFormat {
  const char* name;
  bool fp8;
  bool hnd;
};
constexpr CacheFormat kCaches[] = {
    {"bf16_NHD", false, false}, {"bf16_HND", false, true}, {"fp8_NHD", true, false},
    {"fp8_HND", true, true}};

enum class Row { kCopy, kUnfused, kFused, kCopyQk, kNorm, kRope, kCopyCache, kCacheAppend };

// Bytes the fused kernel must move: q, k, v read; q and 2 * Hk cache heads written.
int64_t CompulsoryBytes(const ModelShape& m, int64_t tokens, bool fp8) {
  const int64_t head = kHeadDim * 2;
  return tokens * ((m.hq + 2 * m.hk) * head + m.hq * head + 2 * m.hk * (fp8 ? head / 2 : head));
}

// Traffic (read + write) of a row, and the copy row it is compared with.
int64_t RowBytes(const ModelShape& m, int64_t tokens, Row row, bool fp8) {
  const int64_t head = kHeadDim * 2;
  switch (row) {
    case Row::kCopyQk:
    case Row::kNorm:
    case Row::kRope:
      return tokens * 2 * (m.hq + m.hk) * head;  // q and k read and written
    case Row::kCopyCache:
    case Row::kCacheAppend:
      return tokens * 2 * m.hk * (head + (fp8 ? head / 2 : head));  // k, v -> cache
    default:
      return CompulsoryBytes(m, tokens, fp8);
  }
}

Row CopyRowOf(Row row) {
  switch (row) {
    case Row::kNorm:
    case Row::kRope:
      return Row::kCopyQk;
    case Row::kCacheAppend:
      return Row::kCopyCache;
    default:
      return Row::kCopy;
  }
}

// Everything one shape needs on the device, allocated once per benchmark.
struct Buffers {
  Buffers(const ModelShape& m, int64_t tokens, const CacheFormat& cache)
      : token_stride(int64_t{m.hq + 2 * m.hk} * kHeadDim),
        num_blocks(tokens / kBlockSize + 1),
        qkv(tokens * token_stride * 2),
        positions(bench_util::NumAxes(m) * tokens * sizeof(int64_t)),
        slots(tokens * sizeof(int64_t)),
        weights(2 * kHeadDim * 2),
        k_cache(num_blocks * kBlockSize * m.hk * kHeadDim * (cache.fp8 ? 1 : 2)),
        v_cache(num_blocks * kBlockSize * m.hk * kHeadDim * (cache.fp8 ? 1 : 2)),
        scales(2 * sizeof(float)),
        flag(sizeof(int)) {
    qkv.Zero();
    const std::vector<int64_t> host_positions =
        bench_util::VideoPositions(tokens, bench_util::NumAxes(m));
    positions.Upload(host_positions.data(), host_positions.size() * sizeof(int64_t));
    std::vector<int64_t> host_slots(tokens);
    for (int64_t t = 0; t < tokens; ++t) host_slots[t] = (t * 7919) % (num_blocks * kBlockSize);
    slots.Upload(host_slots.data(), host_slots.size() * sizeof(int64_t));
    const std::vector<uint16_t> ones(2 * kHeadDim, 0x3F80);  // bf16 1.0
    weights.Upload(ones.data(), ones.size() * 2);
    const float host_scales[2] = {0.25f, 0.5f};
    scales.Upload(host_scales, sizeof(host_scales));
    flag.Zero();
  }

  int64_t token_stride;
  int64_t num_blocks;
  DeviceBuffer qkv, positions, slots, weights, k_cache, v_cache, scales, flag;
};

FusedMropeArgs FusedArgs(const ModelShape& m, int64_t tokens, const CacheFormat& cache,
                         const Buffers& b) {
  uint16_t* qkv = b.qkv.As<uint16_t>();
  const int64_t ts = b.token_stride;
  FusedMropeArgs a;
  a.q = {qkv, DType::kBFloat16, tokens, m.hq, kHeadDim, ts, kHeadDim};
  a.k = {qkv + m.hq * kHeadDim, DType::kBFloat16, tokens, m.hk, kHeadDim, ts, kHeadDim};
  a.v = {qkv + (m.hq + m.hk) * kHeadDim, DType::kBFloat16, tokens, m.hk, kHeadDim, ts, kHeadDim};
  // HunYuan-VL's norm is of the rotated head (the XD forms' kernel); the others' before it.
  const QkNormForm form = m.xd_axes > 0 ? QkNormForm::kWeightAfterRotary : QkNormForm::kWeight;
  a.q_norm = {form, b.weights.data(), DType::kBFloat16, 1e-6f};
  a.k_norm = {form, b.weights.As<uint16_t>() + kHeadDim, DType::kBFloat16, 1e-6f};
  a.positions = {b.positions.data(), true, tokens, tokens};
  a.slot_mapping = b.slots.As<int64_t>();
  const int64_t head_row = int64_t{m.hk} * kHeadDim;
  a.cache = {b.k_cache.data(),
             b.v_cache.data(),
             cache.fp8 ? DType::kFloat8E4m3 : DType::kBFloat16,
             b.num_blocks,
             kBlockSize,
             m.hk,
             kHeadDim,
             kBlockSize * head_row,
             cache.hnd ? kHeadDim : head_row,
             cache.hnd ? int64_t{kBlockSize} * kHeadDim : kHeadDim};
  a.cache.k_scale = b.scales.As<float>();
  a.cache.v_scale = b.scales.As<float>() + 1;
  a.error_flag = b.flag.As<int>();
  return a;
}

unfused_chain::Bf16Heads Heads(const HeadsView& v) {
  return {v.data, v.num_tokens, v.num_heads, v.head_dim, v.token_stride, v.head_stride};
}

// Times per (model, cache, T, row, graph), for the ratios of later rows.
std::map<std::tuple<std::string, std::string, int64_t, Row, bool>, double>& Micros() {
  static auto* micros = new std::map<std::tuple<std::string, std::string, int64_t, Row, bool>, double>;
  return *micros;
}

double Known(const ModelShape& m, const CacheFormat& c, int64_t tokens, Row row, bool graph) {
  const auto it = Micros().find({m.name, c.name, tokens, row, graph});
  return it == Micros().end() ? 0 : it->second;
}

void BM_Row(benchmark::State& state, const ModelShape& m, int64_t tokens, const CacheFormat& c,
            Row row, bool graph) {
  Buffers b(m, tokens, c);
  const RotarySpec spec = bench_util::MakeSpec(m);
  const FusedMropeArgs fused = FusedArgs(m, tokens, c, b);
  MropeKernelArgs rope;
  rope.q = fused.q;
  rope.k = fused.k;
  rope.positions = fused.positions;
  rope.error_flag = fused.error_flag;
  unfused_chain::CacheAppendArgs append;
  append.k = Heads(fused.k);
  append.v = Heads(fused.v);
  append.slot_mapping = fused.slot_mapping;
  append.k_cache = fused.cache.k;
  append.v_cache = fused.cache.v;
  append.fp8 = c.fp8;
  append.k_scale = fused.cache.k_scale;
  append.v_scale = fused.cache.v_scale;
  append.block_size = kBlockSize;
  append.block_stride = fused.cache.block_stride;
  append.slot_stride = fused.cache.slot_stride;
  append.head_stride = fused.cache.head_stride;

  bool ok = true;
  const auto norm = [&](GpuStream s) {
    unfused_chain::EnqueueHeadRmsNorm(Heads(fused.q), Heads(fused.k), fused.q_norm.weight,
                                      fused.k_norm.weight, 1e-6f, s);
  };
  const auto rotate = [&](GpuStream s) { ok = ok && LaunchMropeKernel(spec, rope, s).ok(); };
  const auto cache_append = [&](GpuStream s) { unfused_chain::EnqueueCacheAppend(append, s); };
  const int64_t bytes = RowBytes(m, tokens, row, c.fp8);
  const double copy_us = Known(m, c, tokens, CopyRowOf(row), graph);
  double us = 0;
  switch (row) {
    case Row::kCopy:
    case Row::kCopyQk:
    case Row::kCopyCache: {
      DeviceBuffer src(bytes / 2), dst(bytes / 2);
      src.Zero();
      us = bench_util::TimeLaunches(state, bytes, 0, graph, [&](GpuStream s) {
        gpu_util::CopyAsync(dst.data(), src.data(), bytes / 2, s);
      });
      state.counters["pct_of_copy"] = 100.0;
      break;
    }
    case Row::kUnfused:
      us = bench_util::TimeLaunches(state, bytes, copy_us, graph, [&](GpuStream s) {
        norm(s);
        rotate(s);
        cache_append(s);
      });
      break;
    case Row::kFused: {
      us = bench_util::TimeLaunches(state, bytes, copy_us, graph, [&](GpuStream s) {
        ok = ok && LaunchFusedMropeKernel(spec, fused, s).ok();
      });
      const double unfused_us = Known(m, c, tokens, Row::kUnfused, graph);
      if (unfused_us > 0) state.counters["x_vs_unfused"] = unfused_us / us;
      break;
    }
    case Row::kNorm:
      us = bench_util::TimeLaunches(state, bytes, copy_us, graph, norm);
      break;
    case Row::kRope:
      us = bench_util::TimeLaunches(state, bytes, copy_us, graph, rotate);
      break;
    case Row::kCacheAppend:
      us = bench_util::TimeLaunches(state, bytes, copy_us, graph, cache_append);
      break;
  }
  Micros()[{m.name, c.name, tokens, row, graph}] = us;
  int error_flag = 0;
  b.flag.Download(&error_flag, sizeof(error_flag));
  if (!ok || error_flag != 0) state.SkipWithError("a launch failed or raised an error");
}

void RegisterAll() {
  const auto add = [](const std::string& name, const ModelShape& m, int64_t tokens,
                      const CacheFormat& c, Row row, bool graph) {
    benchmark::RegisterBenchmark(name.c_str(), BM_Row, m, tokens, c, row, graph)
        ->UseManualTime()
        ->Iterations(bench_util::kIterations)
        ->Unit(benchmark::kMicrosecond);
  };
  for (const ModelShape& m : kModels) {
    for (const CacheFormat& c : kCaches) {
      for (const int64_t tokens : kTokenCounts) {
        const std::string suffix =
            std::string(m.name) + "/" + c.name + "/T:" + std::to_string(tokens);
        for (const bool graph : {false, true}) {
          if (graph && tokens > kMaxGraphTokens) continue;
          const std::string g = graph ? "_graph" : "";
          add("copy" + g + "/" + suffix, m, tokens, c, Row::kCopy, graph);
          // The unfused chain normalises before the rotary: not HunYuan-VL's order.
          if (m.xd_axes == 0) add("unfused" + g + "/" + suffix, m, tokens, c, Row::kUnfused, graph);
          add("fused" + g + "/" + suffix, m, tokens, c, Row::kFused, graph);
        }
        if (std::string(c.name) == "bf16_NHD" && m.xd_axes == 0) {
          add("copy_qk/" + suffix, m, tokens, c, Row::kCopyQk, false);
          add("unfused_norm/" + suffix, m, tokens, c, Row::kNorm, false);
          add("unfused_rope/" + suffix, m, tokens, c, Row::kRope, false);
          add("copy_cache/" + suffix, m, tokens, c, Row::kCopyCache, false);
          add("unfused_cache/" + suffix, m, tokens, c, Row::kCacheAppend, false);
        }
      }
    }
  }
}

}  // namespace
}  // namespace mrope

int main(int argc, char** argv) {
  return mrope::bench_util::RunBenchmarks(argc, argv, "fused_kernel_benchmark", mrope::RegisterAll);
}
