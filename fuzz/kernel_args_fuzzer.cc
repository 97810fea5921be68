// Fuzz target: the CUDA kernel's host-side argument validation (kernels/mrope_kernel_validate.h),
// which needs no GPU: it only looks at pointer values, shapes and strides. The pointers here are
// made-up addresses and are never dereferenced.
//
// Input (Wide: FuzzInput::Wide()): spec (head_dim byte, rotary_dim byte, table flag, and if set
// the table's max_position and row_stride Wide), then q and k (base choice byte, offset Wide,
// dtype byte % 4, num_tokens Wide, num_heads Wide, head_dim Wide if the base byte has bit 1,
// token_stride Wide, head_stride Wide), then the position source byte (planar: then its
// axis_stride Wide; sequence delta: num_seqs Wide unless bit 1) and the error_flag byte.
// Properties of every accepted launch, checked by brute force when it is small:
//   * q and k data are aligned to their element size;
//   * no element of q or k is addressed twice (rows of head_dim elements are pairwise
//     disjoint, within q, within k and between them), and no row address wraps around.

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_input.h"
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

void CheckAccepted(const MropeKernelArgs& args) {
  for (const HeadsView* v : {&args.q, &args.k}) {
    FUZZ_CHECK(reinterpret_cast<uintptr_t>(v->data) % ElementSize(v->dtype) == 0,
               "accepted a misaligned view");
  }
  const __int128 rows_q = static_cast<__int128>(args.q.num_tokens) * args.q.num_heads;
  const __int128 rows_k = static_cast<__int128>(args.k.num_tokens) * args.k.num_heads;
  if (rows_q + rows_k > kMaxRowsChecked) return;
  std::vector<std::pair<__int128, __int128>> rows;
  AppendRows(args.q, rows);
  AppendRows(args.k, rows);
  std::sort(rows.begin(), rows.end());
  const __int128 kAddressEnd = static_cast<__int128>(1) << 64;
  for (size_t i = 0; i < rows.size(); ++i) {
    FUZZ_CHECK(rows[i].first >= 0 && rows[i].second <= kAddressEnd,
               "accepted a view whose rows wrap around the address space");
    if (i > 0) {
      FUZZ_CHECK(rows[i - 1].second <= rows[i].first,
                 absl::StrCat("accepted overlapping rows (q: T=", args.q.num_tokens,
                              " H=", args.q.num_heads, " ts=", args.q.token_stride, " hs=",
                              args.q.head_stride, "; k: T=", args.k.num_tokens, " H=",
                              args.k.num_heads, " ts=", args.k.token_stride, " hs=",
                              args.k.head_stride, ", k - q = ",
                              static_cast<int64_t>(reinterpret_cast<uintptr_t>(args.k.data) -
                                                   reinterpret_cast<uintptr_t>(args.q.data)),
                              " bytes)"));
    }
  }
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
  return 0;
}
