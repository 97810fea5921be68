#include "kernels/fused_reference_case.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kernels/fused_reference.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/half_float.h"

namespace mrope {
namespace {

// Values stored as `dtype` (bfloat16 values are exact in bfloat16).
std::vector<uint8_t> Store(const std::vector<float>& values, DType dtype) {
  std::vector<uint8_t> bytes(values.size() * ElementSize(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kBFloat16) {
      const uint16_t bits = FloatToBFloat16(values[i]);
      std::memcpy(&bytes[2 * i], &bits, 2);
    } else {
      std::memcpy(&bytes[4 * i], &values[i], 4);
    }
  }
  return bytes;
}

std::vector<float> Load(const std::vector<uint8_t>& bytes, DType dtype) {
  std::vector<float> values(bytes.size() / ElementSize(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kBFloat16) {
      uint16_t bits;
      std::memcpy(&bits, &bytes[2 * i], 2);
      values[i] = BFloat16ToFloat(bits);
    } else {
      std::memcpy(&values[i], &bytes[4 * i], 4);
    }
  }
  return values;
}

}  // namespace

absl::StatusOr<FusedCaseOutput> RunFusedReference(const AttentionCase& c) {
  const int64_t d = c.spec.head_dim;
  const int32_t dim = c.spec.head_dim;
  std::vector<float> q_gated(c.tokens * c.q_heads * 2 * d, std::nanf(""));
  for (int64_t row = 0; row < c.tokens * c.q_heads; ++row) {
    std::copy_n(&c.q_pre[row * d], d, &q_gated[row * 2 * d]);
  }
  std::vector<uint8_t> q = Store(q_gated, c.dtype);
  std::vector<uint8_t> k = Store(c.k_pre, c.dtype);
  std::vector<uint8_t> q_weight = Store(c.q_norm_weight, c.dtype);
  std::vector<uint8_t> k_weight = Store(c.k_norm_weight, c.dtype);
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
  return FusedCaseOutput{Load(q_out, c.dtype), Load(k_out, c.dtype)};
}

}  // namespace mrope
