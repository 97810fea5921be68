#include "kernels/fused_reference_case.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kernels/fused_reference.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/dtype_storage.h"

namespace mrope {
absl::StatusOr<FusedCaseOutput> RunFusedReference(const AttentionCase& c) {
  const int64_t d = c.spec.head_dim;
  const int32_t dim = c.spec.head_dim;
  std::vector<float> q_gated(c.tokens * c.q_heads * 2 * d, std::nanf(""));
  for (int64_t row = 0; row < c.tokens * c.q_heads; ++row) {
    std::copy_n(&c.q_pre[row * d], d, &q_gated[row * 2 * d]);
  }
  std::vector<uint8_t> q = StoreAllAs(c.dtype, q_gated);
  std::vector<uint8_t> k = StoreAllAs(c.dtype, c.k_pre);
  std::vector<uint8_t> q_weight = StoreAllAs(c.dtype, c.q_norm_weight);
  std::vector<uint8_t> k_weight = StoreAllAs(c.dtype, c.k_norm_weight);
  std::vector<uint8_t> q_out(c.tokens * c.q_heads * d * ElementSize(c.dtype));
  std::vector<uint8_t> k_out(k.size());
  int error_flag = 0;

  FusedMropeArgs a;
  a.q = {q.data(), c.dtype, c.tokens, c.q_heads, dim, c.q_heads * 2 * d, 2 * d};
  a.k = {k.data(), c.dtype, c.tokens, c.k_heads, dim, c.k_heads * d, d};
  a.q_out = {q_out.data(), c.dtype, c.tokens, c.q_heads, dim, c.q_heads * d, d};
  a.k_out = {k_out.data(), c.dtype, c.tokens, c.k_heads, dim, c.k_heads * d, d};
  a.q_norm = {c.norm, q_weight.data(), c.dtype, c.eps};
  a.k_norm = {c.norm, k_weight.data(), c.dtype, c.eps};
  a.positions = {c.positions.data(), true, c.tokens, c.tokens};
  a.error_flag = &error_flag;
  MROPE_RETURN_IF_ERROR(ApplyFusedReference(c.spec, a));
  if (error_flag != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inputs.position_ids: a position is outside [0, 2^24) (error bits ", error_flag, ")"));
  }
  return FusedCaseOutput{LoadAllAs(c.dtype, q_out), LoadAllAs(c.dtype, k_out)};
}

}  // namespace mrope
