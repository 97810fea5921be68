// Fuzz target: the CUDA kernels' host-side argument validation (kernels/mrope_kernel_validate.h
// and, for the fused kernel, kernels/fused_kernel_validate.h with its planner), which needs no
// GPU: it only looks at pointer values, shapes and strides. The pointers here are made-up
// addresses and are never dereferenced.
//
// Input (Wide: FuzzInput::Wide()): spec (head_dim byte, rotary_dim byte, table flag, and if set
// the table's max_position and row_stride Wide), then q and k (base choice byte, offset Wide,
// dtype byte % 4, num_tokens Wide, num_heads Wide, head_dim Wide if the base byte has bit 1,
// token_stride Wide, head_stride Wide), then the position source byte (planar: then its
// axis_stride Wide; sequence delta: num_seqs Wide unless bit 1) and the error_flag byte. Then,
// for the fused kernel on the same spec, q, k and sources: v (a view as above), a flags byte
// (q_out, fp8 q_out, k_out in place or elsewhere, cache, fp8 cache, per-head scales, norms),
// q_out and k_out views when set, and the cache (base byte, num_blocks, block_size, num_heads,
// head_dim Wide, then the three strides Wide).
// Properties of every accepted launch, checked by brute force when it is small:
//   * q and k data are aligned to their element size;
//   * no element of q or k is addressed twice (rows of head_dim elements are pairwise
//     disjoint, within q, within k and between them), and no row address wraps around;
//   * fused: every row the kernel writes (q_out or q, k_out unless it is k, every cache
//     (slot, head) row of k and v) is disjoint from every other row it reads or writes, and the
//     plan stays within the kernel's block, stage and shared-memory limits.

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_input.h"
#include "kernels/fused_kernel_validate.h"
#include "kernels/internal/fused_launch_plan.h"
#include "kernels/internal/fused_params.h"
#include "kernels/mrope_kernel_args.h"
#include "kernels/mrope_kernel_validate.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {
namespace fuzz {
namespace {

constexpr uint64_t kBase = uint64_t{1} << 40;  // where the made-up buffers start
constexpr int64_t kMaxRowsChecked = 1 << 14;


// q, k or anything else at kBase + a byte offset; k may start inside q (a fused qkv buffer).
HeadsView ReadView(FuzzInput& in, int32_t head_dim, uint64_t other) {
  HeadsView v;
  const uint8_t base = in.Byte();
  const uint64_t start = (base & 1) ? other : kBase;
  v.data = reinterpret_cast<void*>(start + static_cast<uint64_t>(in.Wide()));
  v.dtype = static_cast<DType>(in.Byte() % 4);
  v.num_tokens = in.Wide();
  v.num_heads = static_cast<int32_t>(in.Wide());
  v.head_dim = (base & 2) ? static_cast<int32_t>(in.Wide()) : head_dim;
  v.token_stride = in.Wide();
  v.head_stride = in.Wide();
  return v;
}

// Byte ranges [begin, end) of every row of `v`, in 128 bits so that wrap-around shows.
void AppendRows(const HeadsView& v, std::vector<std::pair<__int128, __int128>>& rows) {
  const __int128 size = ElementSize(v.dtype);
  const __int128 base = static_cast<__int128>(reinterpret_cast<uintptr_t>(v.data));
  for (int64_t t = 0; t < v.num_tokens; ++t) {
    for (int64_t h = 0; h < v.num_heads; ++h) {
      const __int128 first = base + size * (static_cast<__int128>(t) * v.token_stride +
                                            static_cast<__int128>(h) * v.head_stride);
      rows.emplace_back(first, first + size * v.head_dim);
    }
  }
}

using Rows = std::vector<std::pair<__int128, __int128>>;

// Sorted `rows` touch no byte twice and stay inside the 64-bit address space.
void CheckDisjoint(Rows rows, const std::string& what) {
  std::sort(rows.begin(), rows.end());
  const __int128 kAddressEnd = static_cast<__int128>(1) << 64;
  for (size_t i = 0; i < rows.size(); ++i) {
    FUZZ_CHECK(rows[i].first >= 0 && rows[i].second <= kAddressEnd,
               "accepted a view whose rows wrap around the address space (" + what + ")");
    if (i > 0) {
      FUZZ_CHECK(rows[i - 1].second <= rows[i].first, "accepted overlapping rows: " + what);
    }
  }
}

__int128 RowCount(const HeadsView& v) {
  return static_cast<__int128>(v.num_tokens) * v.num_heads;
}

void CheckAccepted(const MropeKernelArgs& args) {
  for (const HeadsView* v : {&args.q, &args.k}) {
    FUZZ_CHECK(reinterpret_cast<uintptr_t>(v->data) % ElementSize(v->dtype) == 0,
               "accepted a misaligned view");
  }
  if (RowCount(args.q) + RowCount(args.k) > kMaxRowsChecked) return;
  Rows rows;
  AppendRows(args.q, rows);
  AppendRows(args.k, rows);
  CheckDisjoint(std::move(rows),
                absl::StrCat("q: T=", args.q.num_tokens, " H=", args.q.num_heads, " ts=",
                             args.q.token_stride, " hs=", args.q.head_stride, "; k: T=",
                             args.k.num_tokens, " H=", args.k.num_heads, " ts=",
                             args.k.token_stride, " hs=", args.k.head_stride, ", k - q = ",
                             static_cast<int64_t>(reinterpret_cast<uintptr_t>(args.k.data) -
                                                  reinterpret_cast<uintptr_t>(args.q.data)),
                             " bytes"));
}

bool SameView(const HeadsView& a, const HeadsView& b) {
  return a.data == b.data && a.token_stride == b.token_stride && a.head_stride == b.head_stride &&
         a.dtype == b.dtype;
}

void AppendCacheRows(const PagedKvCache& cache, const void* base, Rows& rows) {
  const __int128 size = ElementSize(cache.dtype);
  const __int128 start = static_cast<__int128>(reinterpret_cast<uintptr_t>(base));
  for (int64_t b = 0; b < cache.num_blocks; ++b) {
    for (int64_t s = 0; s < cache.block_size; ++s) {
      for (int64_t h = 0; h < cache.num_heads; ++h) {
        const __int128 first = start + size * (static_cast<__int128>(b) * cache.block_stride +
                                               static_cast<__int128>(s) * cache.slot_stride +
                                               static_cast<__int128>(h) * cache.head_stride);
        rows.emplace_back(first, first + size * cache.head_dim);
      }
    }
  }
}

void CheckFusedAccepted(const RotarySpec& spec, const FusedMropeArgs& args) {
  const auto plan = kernel_internal::PlanFusedLaunch(spec, args);
  FUZZ_CHECK(plan.ok(), "validated fused arguments failed to plan");
  const kernel_internal::FusedLaunchPlan& p = *plan;
  FUZZ_CHECK(int64_t{p.block_x} * p.block_y * p.block_z <= kernel_internal::kMaxBlockThreads,
             "fused plan: too many threads per block");
  FUZZ_CHECK(int64_t{p.block_y} * p.block_z * spec.head_dim <= kernel_internal::kFusedStageFloats,
             "fused plan: the stage overflows");
  FUZZ_CHECK(int64_t{p.block_z} * (spec.rotary_dim / 2) <= kernel_internal::kSharedPairs &&
                 p.block_z <= kernel_internal::kMaxTokensPerBlock,
             "fused plan: cos/sin slots overflow");
  FUZZ_CHECK(p.grid_y <= 65535, "fused plan: grid_y above the CUDA limit");
  const bool cache = args.slot_mapping != nullptr;
  const HeadsView& q_written = args.q_out.data != nullptr ? args.q_out : args.q;
  __int128 count = RowCount(args.q) + RowCount(args.k) + RowCount(q_written);
  if (cache) {
    count += RowCount(args.v) +
             2 * static_cast<__int128>(args.cache.num_blocks) * args.cache.block_size *
                 args.cache.num_heads;
  }
  if (args.k_out.data != nullptr) count += RowCount(args.k_out);
  if (count > kMaxRowsChecked) return;
  // Written rows against everything else: inputs that are not the same view, other outputs.
  std::vector<std::pair<HeadsView, const char*>> reads = {{args.q, "q"}, {args.k, "k"}};
  if (cache) reads.push_back({args.v, "v"});
  std::vector<std::pair<HeadsView, const char*>> writes = {{q_written, "q_out"}};
  if (args.k_out.data != nullptr) writes.push_back({args.k_out, "k_out"});
  for (size_t w = 0; w < writes.size(); ++w) {
    for (size_t r = 0; r < reads.size(); ++r) {
      if (r == w && SameView(writes[w].first, reads[r].first)) continue;
      Rows rows;
      AppendRows(writes[w].first, rows);
      AppendRows(reads[r].first, rows);
      CheckDisjoint(std::move(rows), absl::StrCat(writes[w].second, " vs ", reads[r].second));
    }
  }
  Rows written;
  for (const auto& [view, name] : writes) AppendRows(view, written);
  if (cache) {
    Rows caches;
    AppendCacheRows(args.cache, args.cache.k, caches);
    AppendCacheRows(args.cache, args.cache.v, caches);
    CheckDisjoint(caches, "cache rows");
    for (const auto* views : {&reads, &writes}) {
      for (const auto& [view, name] : *views) {
        Rows rows = caches;
        AppendRows(view, rows);
        CheckDisjoint(std::move(rows), absl::StrCat("cache vs ", name));
      }
    }
  }
  if (writes.size() == 2) CheckDisjoint(written, "q_out vs k_out");
}

// The fused kernel's arguments on the same spec, q, k and sources as `base`.
FusedMropeArgs ReadFusedArgs(FuzzInput& in, const RotarySpec& spec, const MropeKernelArgs& base) {
  FusedMropeArgs a;
  a.q = base.q;
  a.k = base.k;
  a.positions = base.positions;
  a.sequence_delta = base.sequence_delta;
  a.table = base.table;
  a.error_flag = base.error_flag;
  a.v = ReadView(in, spec.head_dim, reinterpret_cast<uintptr_t>(a.q.data));
  const uint8_t flags = in.Byte();
  const auto scale = [](uint64_t offset) {
    return reinterpret_cast<const float*>(kBase - 8192 + offset);
  };
  if (flags & 1) {
    a.q_out = ReadView(in, spec.head_dim, reinterpret_cast<uintptr_t>(a.k.data));
    if (flags & 2) a.q_out.dtype = DType::kFloat8E4m3;
    a.q_scale = scale(flags & 4);
  }
  if (flags & 8) {
    a.k_out = (flags & 16) ? a.k : ReadView(in, spec.head_dim, reinterpret_cast<uintptr_t>(a.v.data));
  }
  const QkNormForm form = static_cast<QkNormForm>((flags >> 5) % 4);
  a.q_norm = {form, scale(64), DType::kFloat32, 1e-6f};
  a.k_norm = {form, scale(64 + 2048), DType::kBFloat16, 1e-6f};
  if (flags & 128) {
    a.slot_mapping = reinterpret_cast<const int64_t*>(kBase - 16384);
    const uint8_t cache_base = in.Byte();
    PagedKvCache& c = a.cache;
    c.k = reinterpret_cast<void*>(((cache_base & 1) ? kBase : kBase + (uint64_t{1} << 36)) +
                                  static_cast<uint64_t>(in.Wide()));
    c.v = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(c.k) +
                                  static_cast<uint64_t>(in.Wide()));
    c.dtype = (cache_base & 2) ? DType::kFloat8E4m3 : a.k.dtype;
    c.num_blocks = in.Wide();
    c.block_size = static_cast<int32_t>(in.Wide());
    c.num_heads = (cache_base & 4) ? static_cast<int32_t>(in.Wide()) : a.k.num_heads;
    c.head_dim = (cache_base & 8) ? static_cast<int32_t>(in.Wide()) : spec.head_dim;
    c.block_stride = in.Wide();
    c.slot_stride = in.Wide();
    c.head_stride = in.Wide();
    c.k_scale = scale(128);
    c.v_scale = scale(132 + (cache_base & 16 ? 2 : 0));
    c.per_head_scale = (cache_base & 32) != 0;
  }
  return a;
}

}  // namespace
}  // namespace fuzz
}  // namespace mrope

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ::mrope;
  using namespace ::mrope::fuzz;
  FuzzInput in(data, size);
  RotarySpec spec;
  spec.head_dim = in.Byte();
  spec.rotary_dim = 2 * (in.Byte() % 129);
  spec.axis_map.num_pairs = spec.rotary_dim / 2;
  spec.inv_freq.assign(std::max(0, spec.rotary_dim / 2), 1.0f);
  MropeKernelArgs args;
  if (in.Bool()) {  // a cos/sin table instead of inv_freq
    args.table.cos = reinterpret_cast<const float*>(kBase - 4096);
    args.table.sin = args.table.cos + 512;
    args.table.max_position = in.Wide();
    args.table.row_stride = in.Wide();
  }
  args.q = ReadView(in, spec.head_dim, kBase);
  args.k = ReadView(in, spec.head_dim, reinterpret_cast<uintptr_t>(args.q.data));
  const uint8_t source = in.Byte();
  const uint64_t aux = kBase - (uint64_t{1} << 20);  // positions, deltas, flag: below q
  if (source & 1) {
    args.positions.data = reinterpret_cast<const void*>(aux + (source >> 4));
    args.positions.is_int64 = (source & 2) != 0;
    args.positions.num_tokens = args.q.num_tokens;
    args.positions.axis_stride = in.Wide();
  } else {
    args.sequence_delta.token_index = reinterpret_cast<const int64_t*>(aux + (source >> 4));
    args.sequence_delta.delta = reinterpret_cast<const int64_t*>(aux + 64);
    args.sequence_delta.num_tokens = args.q.num_tokens;
    args.sequence_delta.num_seqs = (source & 2) ? args.q.num_tokens : in.Wide();
    if (source & 4) args.sequence_delta.seq_id = reinterpret_cast<const int32_t*>(aux + 128);
  }
  args.error_flag = reinterpret_cast<int*>(aux + 256 + in.Byte() % 8);
  if (ValidateMropeKernelArgs(spec, args).ok()) CheckAccepted(args);
  const FusedMropeArgs fused = ReadFusedArgs(in, spec, args);
  if (ValidateFusedMropeArgs(spec, fused).ok()) CheckFusedAccepted(spec, fused);
  return 0;
}
