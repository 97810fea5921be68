#include "mrope/rotary/heads_overlap.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Elements from v.data to one past the last element v addresses (0 for an empty view).
int64_t Extent(const HeadsView& v) {
  if (v.num_tokens == 0 || v.num_heads == 0) return 0;
  return (v.num_tokens - 1) * (v.num_tokens > 1 ? v.token_stride : 0) +
         (v.num_heads - 1) * (v.num_heads > 1 ? v.head_stride : 0) + v.head_dim;
}

// Elements one token row of v spans.
int64_t RowSpan(const HeadsView& v) {
  return (v.num_heads - 1) * (v.num_heads > 1 ? v.head_stride : 0) + v.head_dim;
}

}  // namespace

absl::Status ValidateDisjointHeads(const HeadsView& q, const HeadsView& k) {
  const int64_t q_extent = Extent(q);
  const int64_t k_extent = Extent(k);
  if (q_extent == 0 || k_extent == 0) return absl::OkStatus();
  const int64_t element_size = ElementSize(q.dtype);
  const uintptr_t q_begin = reinterpret_cast<uintptr_t>(q.data);
  const uintptr_t k_begin = reinterpret_cast<uintptr_t>(k.data);
  const uintptr_t q_end = q_begin + static_cast<uintptr_t>(q_extent * element_size);
  const uintptr_t k_end = k_begin + static_cast<uintptr_t>(k_extent * ElementSize(k.dtype));
  if (q_end <= k_begin || k_end <= q_begin) return absl::OkStatus();

  // Token-major slices of one buffer with one token stride (q and k of a fused qkv): token t of
  // q spans [t * ts, t * ts + q_span), token t' of k spans [d + t' * ts, d + t' * ts + k_span)
  // (elements from q.data). With both spans <= ts only m = t - t' near d / ts can meet.
  const int64_t ts = q.token_stride;
  const int64_t q_span = RowSpan(q);
  const int64_t k_span = RowSpan(k);
  if (q.num_tokens > 1 && q.dtype == k.dtype && k.token_stride == ts && q_span <= ts &&
      k_span <= ts &&
      (k_begin - q_begin) % static_cast<uintptr_t>(element_size) == 0) {
    // The ranges overlap, so d is small.
    const int64_t d =
        (static_cast<int64_t>(k_begin) - static_cast<int64_t>(q_begin)) / element_size;
    const int64_t m0 = FloorDiv(d, ts);
    bool meet = false;
    for (int64_t m = m0 - 1; m <= m0 + 1; ++m) {
      if (m < -(q.num_tokens - 1) || m > q.num_tokens - 1) continue;
      meet = meet || (m * ts < d + k_span && d < m * ts + q_span);
    }
    if (!meet) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "q and k overlap: q.data=", absl::StrFormat("%p", q.data), " spans ", q_extent,
      " elements, k.data=", absl::StrFormat("%p", k.data), " spans ", k_extent,
      " (token_stride ", q.token_stride, " vs ", k.token_stride, "); they must be disjoint"));
}

}  // namespace mrope
