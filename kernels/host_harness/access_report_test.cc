// The kernels' memory behaviour without a GPU: every kernel path on the benchmarks' model
// shapes (kernels/bench_shapes.h) runs under the host harness's access model
// (access_model.h), and the test checks what decides a memory-bound kernel's speed:
//  - every global access that moves q, k, v or the cache uses >= 95% of the 32-byte sectors
//    it touches (views misaligned on purpose, for the scalar paths: one sector more than the
//    bytes need per request);
//  - no shared memory access has bank conflicts above 2-way;
//  - no byte of q, k and v (the compulsory input) is read twice in a launch.
// The report (markdown) goes to the test's undeclared outputs (access_report.md) and stdout;
// kernels/BENCHMARKS.md keeps a copy ("Access model (host harness)").

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/bench_shapes.h"
#include "kernels/fused_kernel.h"
#include "kernels/gpu_util.h"
#include "kernels/host_harness/access_model.h"
#include "kernels/mrope_kernel.h"

namespace mrope {
namespace {

using bench_util::kHeadDim;
using bench_util::ModelShape;
using gpu_util::DeviceBuffer;

constexpr double kMinSectorEfficiency = 0.95;
constexpr int kMaxBankWays = 2;
constexpr int kBlockSize = 16;  // the fused benchmark's paged-cache block
constexpr int64_t kPrefillTokens = 1024;  // the planners' prefill branch starts here

struct PathReport {
  std::string path;
  mrope_host::AccessReport report;
  bool misaligned = false;  // q, k and v start 2 bytes past a sector (the scalar paths)
};

// A misaligned view's request of B bytes touches ceil(B / 32) + 1 sectors at best: the check
// allows that one sector more per request.
bool Coalesced(const mrope_host::SiteStats& s, bool misaligned) {
  if (!misaligned) return s.SectorEfficiency() >= kMinSectorEfficiency;
  const uint64_t bytes_per_request = s.requested_bytes / std::max<uint64_t>(1, s.requests);
  return s.sectors <= s.requests * ((bytes_per_request + 31) / 32 + 1);
}

bool MovesTensors(const mrope_host::SiteStats& site) {
  for (const char* name : {"qkv", "q_out", "k_cache", "v_cache"}) {
    if (("," + site.buffers + ",").find(std::string(",") + name + ",") != std::string::npos) {
      return true;
    }
  }
  return false;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "fp32";
    case DType::kFloat16:
      return "fp16";
    case DType::kFloat8E4m3:
      return "fp8";
    default:
      return "bf16";
  }
}

// q, k and v of T tokens in one [T][Hq + 2 Hk][D] buffer of `dtype` (as the benchmarks slice
// them), `offset` elements from its start (1: no 16-byte alignment, the scalar paths); values
// near 1.
struct Qkv {
  Qkv(const ModelShape& m, int64_t tokens, int64_t offset, DType dtype = DType::kBFloat16)
      : dtype(dtype),
        element_size(dtype == DType::kFloat32 ? 4 : 2),
        token_stride(int64_t{m.hq + 2 * m.hk} * kHeadDim),
        buffer((tokens * token_stride + offset) * element_size),
        positions(bench_util::NumAxes(m) * tokens * sizeof(int64_t)),
        flag(sizeof(int)) {
    const size_t count = tokens * token_stride + offset;
    if (element_size == 4) {
      std::vector<float> values(count);
      for (size_t i = 0; i < count; ++i) {
        values[i] = 1.0f + static_cast<float>(i * 7919 % 256) / 256.0f;
      }
      buffer.Upload(values.data(), count * 4);
    } else {
      const bool fp16 = dtype == DType::kFloat16;
      std::vector<uint16_t> values(count);
      for (size_t i = 0; i < count; ++i) {
        values[i] = fp16 ? 0x3C00 + (i * 7919) % 1024 : 0x3F80 + (i * 7919) % 256;
      }
      buffer.Upload(values.data(), count * 2);
    }
    const std::vector<int64_t> host = bench_util::VideoPositions(tokens, bench_util::NumAxes(m));
    positions.Upload(host.data(), host.size() * sizeof(int64_t));
    flag.Zero();
    base = buffer.As<char>() + offset * element_size;
    mrope_host::NameBuffer(buffer.data(), count * element_size, "qkv");
    mrope_host::NameBuffer(positions.data(), host.size() * sizeof(int64_t), "positions");
    mrope_host::NameBuffer(flag.data(), sizeof(int), "flag");
  }
  HeadsView View(const ModelShape& m, int64_t tokens, int first_head, int heads) const {
    return {base + int64_t{first_head} * kHeadDim * element_size, dtype, tokens, heads,
            kHeadDim, token_stride, kHeadDim};
  }

  DType dtype;
  int element_size;
  int64_t token_stride;
  DeviceBuffer buffer, positions, flag;
  char* base = nullptr;
};

mrope_host::AccessReport Record(const std::function<absl::Status()>& launch) {
  mrope_host::StartRecording();
  const absl::Status status = launch();
  mrope_host::AccessReport report = mrope_host::FinishRecording();
  EXPECT_TRUE(status.ok()) << status;
  return report;
}

PathReport RunMrope(const ModelShape& m, int64_t tokens, bool scalar, const char* path) {
  const RotarySpec spec = bench_util::MakeSpec(m);
  Qkv qkv(m, tokens, scalar ? 1 : 0);
  MropeKernelArgs args;
  args.q = qkv.View(m, tokens, 0, m.hq);
  args.k = qkv.View(m, tokens, m.hq, m.hk);
  args.positions = {qkv.positions.data(), true, tokens, tokens};
  args.error_flag = qkv.flag.As<int>();
  PathReport r{std::string(path) + ", " + m.name + ", T = " + std::to_string(tokens),
               Record([&] { return LaunchMropeKernel(spec, args, nullptr); }), scalar};
  mrope_host::ForgetBuffers();
  return r;
}

// The fused kernel with q, k and v of `dtype`, a cache of that dtype or fp8 (then q is written
// as fp8 to another buffer, q_out, too), NHD or HND.
PathReport RunFused(const ModelShape& m, int64_t tokens, DType dtype, bool fp8, bool hnd) {
  const RotarySpec spec = bench_util::MakeSpec(m);
  Qkv qkv(m, tokens, 0, dtype);
  const int64_t num_blocks = tokens / kBlockSize + 1;
  const int64_t cache_bytes =
      num_blocks * kBlockSize * m.hk * kHeadDim * (fp8 ? 1 : qkv.element_size);
  const int64_t q_out_bytes = tokens * m.hq * kHeadDim;  // fp8
  DeviceBuffer q_out(fp8 ? q_out_bytes : 1);
  DeviceBuffer k_cache(cache_bytes), v_cache(cache_bytes), slots(tokens * sizeof(int64_t)),
      weights(2 * kHeadDim * 2), scales(2 * sizeof(float));
  std::vector<int64_t> host_slots(tokens);
  for (int64_t t = 0; t < tokens; ++t) host_slots[t] = (t * 7919) % (num_blocks * kBlockSize);
  slots.Upload(host_slots.data(), host_slots.size() * sizeof(int64_t));
  const std::vector<uint16_t> ones(2 * kHeadDim, 0x3F80);
  weights.Upload(ones.data(), ones.size() * 2);
  const float host_scales[2] = {0.25f, 0.5f};
  scales.Upload(host_scales, sizeof(host_scales));
  mrope_host::NameBuffer(k_cache.data(), cache_bytes, "k_cache");
  mrope_host::NameBuffer(v_cache.data(), cache_bytes, "v_cache");
  mrope_host::NameBuffer(slots.data(), tokens * sizeof(int64_t), "slots");
  mrope_host::NameBuffer(weights.data(), 2 * kHeadDim * 2, "norm_weights");
  mrope_host::NameBuffer(scales.data(), sizeof(host_scales), "scales");
  if (fp8) mrope_host::NameBuffer(q_out.data(), q_out_bytes, "q_out");

  FusedMropeArgs a;
  a.q = qkv.View(m, tokens, 0, m.hq);
  a.k = qkv.View(m, tokens, m.hq, m.hk);
  a.v = qkv.View(m, tokens, m.hq + m.hk, m.hk);
  // HunYuan-VL's norm is of the rotated head (the XD forms' kernel); the others' before it.
  const QkNormForm form = m.xd_axes > 0 ? QkNormForm::kWeightAfterRotary : QkNormForm::kWeight;
  a.q_norm = {form, weights.data(), DType::kBFloat16, 1e-6f};
  a.k_norm = {form, weights.As<uint16_t>() + kHeadDim, DType::kBFloat16, 1e-6f};
  a.positions = {qkv.positions.data(), true, tokens, tokens};
  a.slot_mapping = slots.As<int64_t>();
  const int64_t head_row = int64_t{m.hk} * kHeadDim;
  if (fp8) {
    a.q_out = {q_out.data(), DType::kFloat8E4m3, tokens, m.hq, kHeadDim,
               int64_t{m.hq} * kHeadDim, kHeadDim};
    a.q_scale = scales.As<float>();
  }
  a.cache = {k_cache.data(), v_cache.data(), fp8 ? DType::kFloat8E4m3 : dtype,
             num_blocks,     kBlockSize,     m.hk,
             kHeadDim,       kBlockSize * head_row,
             hnd ? kHeadDim : head_row,
             hnd ? int64_t{kBlockSize} * kHeadDim : kHeadDim};
  a.cache.k_scale = scales.As<float>();
  a.cache.v_scale = scales.As<float>() + 1;
  a.error_flag = qkv.flag.As<int>();
  PathReport r{std::string("fused ") + DTypeName(dtype) + " qkv, " +
                   (fp8 ? "fp8 q out and cache" : "cache") + (hnd ? " HND" : " NHD") +
                   ", " + m.name + ", T = " + std::to_string(tokens),
               Record([&] { return LaunchFusedMropeKernel(spec, a, nullptr); })};
  mrope_host::ForgetBuffers();
  return r;
}

std::vector<PathReport> RunAllPaths() {
  std::vector<PathReport> paths;
  for (const ModelShape& m :
       {bench_util::kQwen3Vl8B, bench_util::kQwen25Vl7B, bench_util::kHunYuanVl}) {
    paths.push_back(RunMrope(m, kPrefillTokens, false, "in-place vector"));
    paths.push_back(RunMrope(m, 64, true, "in-place scalar"));
    paths.push_back(RunMrope(m, 1, false, "in-place decode"));
    paths.push_back(RunMrope(m, 16, false, "in-place decode"));
  }
  // Every input dtype, cache dtype (the input's or fp8) and cache layout; fp16 and fp32 on
  // one shape (fp16's accesses are bf16's); HunYuan-VL (XD forms) in bf16 and fp32.
  for (const ModelShape& m :
       {bench_util::kQwen3Vl8B, bench_util::kQwen25Vl7B, bench_util::kHunYuanVl}) {
    for (const DType dtype : {DType::kBFloat16, DType::kFloat16, DType::kFloat32}) {
      const bool all_dtypes = std::string(m.name) == bench_util::kQwen3Vl8B.name ||
                              (m.xd_axes > 0 && dtype != DType::kFloat16);
      if (dtype != DType::kBFloat16 && !all_dtypes) continue;
      for (const bool fp8 : {false, true}) {
        for (const bool hnd : {false, true}) {
          for (const int64_t tokens : {kPrefillTokens, int64_t{1}}) {
            paths.push_back(RunFused(m, tokens, dtype, fp8, hnd));
          }
        }
      }
    }
  }
  return paths;
}

std::string Fixed(double x, int digits) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.*f", digits, x);
  return text;
}

// Per path: the worst sector efficiency of the accesses that move q, k, v or the cache, and of
// any global access; the worst shared memory bank conflict; the compulsory bytes read twice.
std::string Summary(const std::vector<PathReport>& paths) {
  std::ostringstream out;
  out << "| path | q/k/v/cache: worst sector efficiency (site) | any global: worst (site) | "
         "shared: worst ways (site) | q/k/v bytes read twice | other bytes read twice |\n"
      << "| --- | --- | --- | --- | --- | --- |\n";
  for (const PathReport& p : paths) {
    const mrope_host::SiteStats* worst_tensor = nullptr;
    const mrope_host::SiteStats* worst_global = nullptr;
    const mrope_host::SiteStats* worst_shared = nullptr;
    for (const auto& s : p.report.sites) {
      if (s.shared) {
        if (worst_shared == nullptr || s.max_ways > worst_shared->max_ways) worst_shared = &s;
        continue;
      }
      if (worst_global == nullptr || s.SectorEfficiency() < worst_global->SectorEfficiency()) {
        worst_global = &s;
      }
      if (MovesTensors(s) && (worst_tensor == nullptr ||
                              s.SectorEfficiency() < worst_tensor->SectorEfficiency())) {
        worst_tensor = &s;
      }
    }
    const auto efficiency = [](const mrope_host::SiteStats* s) {
      return s == nullptr ? std::string("-")
                          : Fixed(s->SectorEfficiency(), 3) + " (" + s->site + " " +
                                (s->store ? "st" : "ld") + " " + s->buffers + ")";
    };
    uint64_t compulsory = 0;
    uint64_t other = 0;
    for (const auto& b : p.report.buffers) (b.name == "qkv" ? compulsory : other) += b.bytes_reread;
    out << "| " << p.path << " | " << efficiency(worst_tensor) << " | "
        << efficiency(worst_global) << " | "
        << (worst_shared == nullptr ? std::string("-")
                                    : std::to_string(worst_shared->max_ways) + " (" +
                                          worst_shared->site +
                                          (worst_shared->store ? " st" : " ld") + ")")
        << " | " << compulsory << " | " << other << " |\n";
  }
  return out.str();
}

// Every site of one path.
std::string Sites(const PathReport& p) {
  std::ostringstream out;
  out << "#### " << p.path << "\n\n"
      << "| site | op | buffers | requests | bytes requested | sectors | efficiency | lines "
         "per request | bank ways |\n"
      << "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& s : p.report.sites) {
    out << "| " << s.site << " | " << (s.store ? "st" : "ld") << " | "
        << (s.shared ? "shared" : s.buffers) << " | " << s.requests << " | "
        << s.requested_bytes << " | " << (s.shared ? "-" : std::to_string(s.sectors)) << " | "
        << (s.shared ? "-" : Fixed(s.SectorEfficiency(), 3)) << " | "
        << (s.shared || s.requests == 0
                ? "-"
                : Fixed(static_cast<double>(s.lines) / static_cast<double>(s.requests), 2))
        << " | " << (s.shared ? std::to_string(s.max_ways) : "-") << " |\n";
  }
  return out.str() + "\n";
}

TEST(AccessReportTest, EveryKernelPathMovesItsBytesOnceAndCoalesced) {
  const std::vector<PathReport> paths = RunAllPaths();
  std::string report = "### Summary\n\n" + Summary(paths) + "\n### Sites\n\n";
  for (const PathReport& p : paths) report += Sites(p);
  std::printf("%s", report.c_str());
  if (const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR"); dir != nullptr) {
    std::ofstream(std::string(dir) + "/access_report.md") << report;
  }

  for (const PathReport& p : paths) {
    ASSERT_FALSE(p.report.sites.empty()) << p.path << ": no access recorded";
    for (const auto& s : p.report.sites) {
      if (s.shared) {
        EXPECT_LE(s.max_ways, kMaxBankWays)
            << p.path << ": " << s.site << (s.store ? " store" : " load")
            << " has shared memory bank conflicts";
      } else if (MovesTensors(s)) {
        EXPECT_TRUE(Coalesced(s, p.misaligned))
            << p.path << ": " << s.site << (s.store ? " store" : " load") << " on "
            << s.buffers << " is not coalesced";
      }
    }
    for (const auto& b : p.report.buffers) {
      if (b.name == "qkv") {
        EXPECT_EQ(b.bytes_reread, 0u) << p.path << ": q/k/v bytes read twice";
        EXPECT_GT(b.bytes_read, 0u) << p.path;
      }
    }
  }
}

}  // namespace
}  // namespace mrope
