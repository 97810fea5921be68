#include "kernels/internal/arg_checks.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/axis_map.h"
#include "mrope/rotary/rope_math.h"

namespace mrope {
namespace kernel_internal {
namespace {
// True if no two rows of head_dim elements of `v` share an element: token-major ([T][H][D],
// padding allowed) or head-major ([H][T][D]). Strides of size-1 dimensions never matter.
bool RowsDisjoint(const HeadsView& v) {
  const int64_t d = v.head_dim;
  const bool many_tokens = v.num_tokens > 1;
  const bool many_heads = v.num_heads > 1;
  if (many_tokens && many_heads) {
    int64_t token_row = 0;  // num_heads * head_stride
    int64_t head_row = 0;   // num_tokens * token_stride
    const bool token_major = v.head_stride >= d &&
                             MulAdd(v.num_heads, v.head_stride, 0, &token_row) &&
                             v.token_stride >= token_row;
    const bool head_major = v.token_stride >= d &&
                            MulAdd(v.num_tokens, v.token_stride, 0, &head_row) &&
                            v.head_stride >= head_row;
    return token_major || head_major;
  }
  if (many_tokens) return v.token_stride >= d;
  if (many_heads) return v.head_stride >= d;
  return true;
}

}  // namespace

std::string Hex(const void* p) { return absl::StrFormat("%p", p); }

bool MulAdd(int64_t a, int64_t b, int64_t c, int64_t* out) {
  int64_t product = 0;
  return !__builtin_mul_overflow(a, b, &product) && !__builtin_add_overflow(product, c, out);
}

bool Aligned(const void* p, int64_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(bytes) == 0;
}

bool IsStorageDType(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kBFloat16 || dtype == DType::kFloat16;
}




absl::Status ValidateSpec(const RotarySpec& spec, bool uses_inv_freq) {
  if (spec.head_dim < 1 || spec.head_dim > kMaxHeadDim) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.head_dim=", spec.head_dim, " must be in [1, ", kMaxHeadDim, "]"));
  }
  if (spec.rotary_dim < 2 || spec.rotary_dim > spec.head_dim || spec.rotary_dim % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.rotary_dim=", spec.rotary_dim,
                     " must be even and in [2, head_dim=", spec.head_dim, "]"));
  }
  if (spec.layout != RotaryLayout::kNeox && spec.layout != RotaryLayout::kGptj) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.layout=", static_cast<int>(spec.layout), " is not NeoX or GPT-J"));
  }
  const int num_pairs = spec.rotary_dim / 2;
  if (spec.axis_map.num_pairs != num_pairs) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.axis_map.num_pairs=", spec.axis_map.num_pairs,
                     " must equal rotary_dim / 2 = ", num_pairs));
  }
  MROPE_RETURN_IF_ERROR(ValidateAxisMap(spec.axis_map, num_pairs));
  if (spec.axis_map.split_halves && spec.layout != RotaryLayout::kNeox) {
    return absl::UnimplementedError(
        "spec.axis_map: XD-RoPE's split halves (mrope_layout xd) are NeoX halves; the kernels "
        "do not take them with GPT-J pairs");
  }
  if (!uses_inv_freq) return absl::OkStatus();
  if (!IsSinCosMath(spec.sincos_math)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.sincos_math=", static_cast<int>(spec.sincos_math), " is not kDouble or kFloat32"));
  }
  if (spec.inv_freq.size() != static_cast<size_t>(num_pairs)) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.inv_freq has ", spec.inv_freq.size(),
                     " entries, expected rotary_dim / 2 = ", num_pairs));
  }
  for (int j = 0; j < num_pairs; ++j) {
    if (!std::isfinite(spec.inv_freq[j])) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec.inv_freq[", j, "]=", spec.inv_freq[j], " is not finite"));
    }
  }
  if (!std::isfinite(spec.attention_scaling)) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.attention_scaling=", spec.attention_scaling, " is not finite"));
  }
  return absl::OkStatus();
}

// Validates one of q / k: dtype, shape, alignment, 64-bit offsets, rows that do not overlap.
absl::Status ValidateHeads(const HeadsView& v, const char* name, int head_dim, bool fp8_allowed) {
  if (v.data == nullptr) return absl::InvalidArgumentError(absl::StrCat(name, ".data is null"));
  if (!IsStorageDType(v.dtype) && !(fp8_allowed && v.dtype == DType::kFloat8E4m3)) {
    return absl::InvalidArgumentError(absl::StrCat(name, ".dtype=", static_cast<int>(v.dtype),
                                                   " is not fp32, bf16 or fp16",
                                                   fp8_allowed ? " or fp8 e4m3" : ""));
  }
  const int64_t element_size = ElementSize(v.dtype);
  if (!Aligned(v.data, element_size)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ".data=", Hex(v.data), " is not aligned to its element size ", element_size));
  }
  if (v.num_tokens < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ".num_tokens=", v.num_tokens, " is negative"));
  }
  if (v.num_heads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ".num_heads=", v.num_heads, " must be at least 1"));
  }
  if (v.head_dim != head_dim) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ".head_dim=", v.head_dim, " differs from spec.head_dim=", head_dim));
  }
  if (v.num_tokens > 1 && v.token_stride < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ".token_stride=", v.token_stride, " is negative"));
  }
  if (v.num_heads > 1 && v.head_stride < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ".head_stride=", v.head_stride, " is negative"));
  }
  if (v.num_tokens == 0) return absl::OkStatus();
  int64_t extent = 0;
  int64_t bytes = 0;
  const bool fits = MulAdd(v.num_tokens - 1, v.num_tokens > 1 ? v.token_stride : 0, 0, &extent) &&
                    MulAdd(v.num_heads - 1, v.num_heads > 1 ? v.head_stride : 0, extent, &extent) &&
                    MulAdd(1, extent, v.head_dim, &extent) &&
                    MulAdd(extent, element_size, 0, &bytes) &&
                    reinterpret_cast<uintptr_t>(v.data) <=
                        std::numeric_limits<uintptr_t>::max() - static_cast<uintptr_t>(bytes);
  if (!fits) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " offsets overflow 64 bits (num_tokens=", v.num_tokens, ", token_stride=",
        v.token_stride, ", num_heads=", v.num_heads, ", head_stride=", v.head_stride, ")"));
  }
  if (!RowsDisjoint(v)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " rows overlap: token_stride=", v.token_stride, ", head_stride=", v.head_stride,
        " with num_tokens=", v.num_tokens, ", num_heads=", v.num_heads, ", head_dim=", v.head_dim,
        " (need [T][H][D] or [H][T][D] strides, padding allowed)"));
  }
  return absl::OkStatus();
}

namespace {

// Planar positions [num_axes][num_tokens].
absl::Status ValidatePlanar(const PositionsView& pos, int num_axes, int64_t num_tokens) {
  if (pos.num_tokens != num_tokens) {
    return absl::InvalidArgumentError(absl::StrCat("positions.num_tokens=", pos.num_tokens,
                                                   " differs from q.num_tokens=", num_tokens));
  }
  if (pos.axis_stride < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("positions.axis_stride=", pos.axis_stride, " is negative"));
  }
  const int64_t element_size = pos.is_int64 ? 8 : 4;
  if (!Aligned(pos.data, element_size)) {
    return absl::InvalidArgumentError(
        absl::StrCat("positions.data=", Hex(pos.data), " is not aligned to ", element_size));
  }
  int64_t bytes = 0;
  if (!MulAdd(num_axes - 1, pos.axis_stride, num_tokens, &bytes) ||
      !MulAdd(bytes, element_size, 0, &bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("positions.axis_stride=", pos.axis_stride, " overflows 64-bit offsets"));
  }
  return absl::OkStatus();
}

absl::Status ValidateSequenceDelta(const SequenceDeltaPositions& seq, int64_t num_tokens) {
  if (seq.num_tokens != num_tokens) {
    return absl::InvalidArgumentError(absl::StrCat("sequence_delta.num_tokens=", seq.num_tokens,
                                                   " differs from q.num_tokens=", num_tokens));
  }
  if (seq.delta == nullptr) {
    return absl::InvalidArgumentError("sequence_delta.delta is null");
  }
  if (seq.num_seqs < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("sequence_delta.num_seqs=", seq.num_seqs, " must be at least 1"));
  }
  if (seq.seq_id == nullptr && seq.num_seqs != num_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sequence_delta.seq_id is null (token i is sequence i) but num_seqs=", seq.num_seqs,
        " differs from num_tokens=", num_tokens));
  }
  if (!Aligned(seq.token_index, 8) || !Aligned(seq.delta, 8) || !Aligned(seq.seq_id, 4)) {
    return absl::InvalidArgumentError(
        absl::StrCat("sequence_delta pointers misaligned: token_index=", Hex(seq.token_index),
                     " (8), delta=", Hex(seq.delta), " (8), seq_id=", Hex(seq.seq_id), " (4)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateTable(const DeviceCosSinTable& table, int num_pairs) {
  if (table.cos == nullptr || table.sin == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("table.cos=", Hex(table.cos),
                                                   " and table.sin=", Hex(table.sin),
                                                   " must both be set or both be null"));
  }
  if (!Aligned(table.cos, 4) || !Aligned(table.sin, 4)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "table.cos=", Hex(table.cos), " / table.sin=", Hex(table.sin), " are not 4-byte aligned"));
  }
  if (table.max_position < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("table.max_position=", table.max_position, " must be at least 1"));
  }
  if (table.row_stride < num_pairs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "table.row_stride=", table.row_stride, " is smaller than rotary_dim / 2 = ", num_pairs));
  }
  int64_t bytes = 0;
  if (!MulAdd(table.max_position - 1, table.row_stride, num_pairs, &bytes) ||
      !MulAdd(bytes, 4, 0, &bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("table.max_position=", table.max_position,
                                                   " * row_stride=", table.row_stride,
                                                   " overflows 64-bit offsets"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateQk(const HeadsView& q, const HeadsView& k, int head_dim) {
  MROPE_RETURN_IF_ERROR(ValidateHeads(q, "q", head_dim));
  MROPE_RETURN_IF_ERROR(ValidateHeads(k, "k", head_dim));
  if (q.dtype != k.dtype) {
    return absl::InvalidArgumentError(absl::StrCat("q.dtype=", static_cast<int>(q.dtype),
                                                   " differs from k.dtype=",
                                                   static_cast<int>(k.dtype)));
  }
  if (q.num_tokens != k.num_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "q.num_tokens=", q.num_tokens, " differs from k.num_tokens=", k.num_tokens));
  }
  if (int64_t{q.num_heads} + k.num_heads > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "q.num_heads=", q.num_heads, " + k.num_heads=", k.num_heads, " overflows int32"));
  }
  return absl::OkStatus();
}

absl::Status ValidateErrorFlag(const int* error_flag) {
  if (error_flag == nullptr) {
    return absl::InvalidArgumentError(
        "error_flag is null; pass a device int for position / sequence errors");
  }
  if (!Aligned(error_flag, 4)) {
    return absl::InvalidArgumentError(
        absl::StrCat("error_flag=", Hex(error_flag), " is not 4-byte aligned"));
  }
  return absl::OkStatus();
}

absl::Status ValidateRotarySources(const RotarySpec& spec, const PositionsView& positions,
                                   const SequenceDeltaPositions& sequence_delta,
                                   const DeviceCosSinTable& table, RotationDirection direction,
                                   int64_t num_tokens) {
  if (!IsRotationDirection(direction)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "direction=", static_cast<int>(direction), " is not kForward or kInverse"));
  }
  const bool uses_table = table.cos != nullptr || table.sin != nullptr;
  MROPE_RETURN_IF_ERROR(ValidateSpec(spec, !uses_table));
  if (uses_table) MROPE_RETURN_IF_ERROR(ValidateTable(table, spec.rotary_dim / 2));
  const bool planar = positions.data != nullptr;
  const bool sequence = sequence_delta.token_index != nullptr;
  if (planar == sequence) {
    return absl::InvalidArgumentError(absl::StrCat(
        "exactly one position source is needed: positions.data=", Hex(positions.data),
        ", sequence_delta.token_index=", Hex(sequence_delta.token_index)));
  }
  return planar ? ValidatePlanar(positions, AxisCount(spec.axis_map), num_tokens)
                : ValidateSequenceDelta(sequence_delta, num_tokens);
}

}  // namespace kernel_internal
}  // namespace mrope
