#include "kernels/fused_kernel_validate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/internal/arg_checks.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/heads_overlap.h"

namespace mrope {
namespace {

using kernel_internal::Aligned;
using kernel_internal::Hex;
using kernel_internal::IsStorageDType;
using kernel_internal::MulAdd;
using kernel_internal::ValidateHeads;

bool SameView(const HeadsView& a, const HeadsView& b) {
  return a.data == b.data && a.dtype == b.dtype && a.num_tokens == b.num_tokens &&
         a.num_heads == b.num_heads && a.head_dim == b.head_dim &&
         a.token_stride == b.token_stride && a.head_stride == b.head_stride;
}

// `out` (named out_name) has the shape of `in` (named in_name).
absl::Status ValidateSameShape(const HeadsView& out, const char* out_name, const HeadsView& in,
                               const char* in_name) {
  if (out.num_tokens != in.num_tokens || out.num_heads != in.num_heads) {
    return absl::InvalidArgumentError(absl::StrCat(
        out_name, " is [", out.num_tokens, "][", out.num_heads, "] tokens x heads, ", in_name,
        " is [", in.num_tokens, "][", in.num_heads, "]"));
  }
  return absl::OkStatus();
}

absl::Status ValidateNorm(const QkNormArgs& norm, const char* name, int head_dim) {
  if (!IsQkNormForm(norm.form)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ".form=", static_cast<int>(norm.form), " is not a QkNormForm"));
  }
  if (norm.form == QkNormForm::kNone) return absl::OkStatus();
  if (norm.weight == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(name, ".weight is null (", head_dim,
                                                   " values needed for the norm)"));
  }
  if (!IsStorageDType(norm.weight_dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(name, ".weight_dtype=",
                                                   static_cast<int>(norm.weight_dtype),
                                                   " is not fp32, bf16 or fp16"));
  }
  if (!Aligned(norm.weight, ElementSize(norm.weight_dtype))) {
    return absl::InvalidArgumentError(absl::StrCat(name, ".weight=", Hex(norm.weight),
                                                   " is not aligned to its element size"));
  }
  if (!std::isfinite(norm.eps) || norm.eps < 0.0f) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ".eps=", norm.eps, " must be finite and >= 0"));
  }
  return absl::OkStatus();
}

absl::Status ValidateScale(const float* scale, const char* name) {
  if (scale == nullptr || !Aligned(scale, 4)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, "=", Hex(scale), " must be a non-null, 4-byte aligned device float for fp8"));
  }
  return absl::OkStatus();
}

// A byte range [begin, end) of device memory.
struct ByteRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  const char* name = "";
};

bool Overlap(const ByteRange& a, const ByteRange& b) {
  return a.begin < a.end && b.begin < b.end && a.begin < b.end && b.begin < a.end;
}

// The cache's (block, offset, head) rows of head_dim elements: no two may share an element
// (dims of size 1 aside, each stride at least the extent of the dims it steps over), and the
// extent must fit int64 bytes. Returns the extent in elements.
absl::Status ValidateCacheLayout(const PagedKvCache& cache, int64_t* extent) {
  struct Dim {
    int64_t size;
    int64_t stride;
    const char* name;
  };
  std::array<Dim, 3> dims = {Dim{cache.num_blocks, cache.block_stride, "block_stride"},
                             Dim{cache.block_size, cache.slot_stride, "slot_stride"},
                             Dim{cache.num_heads, cache.head_stride, "head_stride"}};
  for (const Dim& dim : dims) {
    if (dim.stride < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("cache.", dim.name, "=", dim.stride, " is negative"));
    }
  }
  std::sort(dims.begin(), dims.end(),
            [](const Dim& a, const Dim& b) { return a.stride < b.stride; });
  int64_t inner = cache.head_dim;  // elements the dims below span
  for (const Dim& dim : dims) {
    if (dim.size <= 1) continue;
    if (dim.stride < inner) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cache rows overlap: ", dim.name, "=", dim.stride, " is below the ", inner,
          " elements of the dims inside it (block_stride=", cache.block_stride,
          ", slot_stride=", cache.slot_stride, ", head_stride=", cache.head_stride, ")"));
    }
    if (!MulAdd(dim.size - 1, dim.stride, inner, &inner)) {
      return absl::InvalidArgumentError(
          absl::StrCat("cache extent overflows 64 bits at ", dim.name, "=", dim.stride));
    }
  }
  int64_t bytes = 0;
  if (!MulAdd(inner, ElementSize(cache.dtype), 0, &bytes)) {
    return absl::InvalidArgumentError("cache extent in bytes overflows 64 bits");
  }
  *extent = inner;
  return absl::OkStatus();
}

absl::Status ValidateCache(const FusedMropeArgs& args, int head_dim, int64_t* extent) {
  const PagedKvCache& cache = args.cache;
  if (!Aligned(args.slot_mapping, 8)) {
    return absl::InvalidArgumentError(
        absl::StrCat("slot_mapping=", Hex(args.slot_mapping), " is not 8-byte aligned"));
  }
  if (cache.k == nullptr || cache.v == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("cache.k=", Hex(cache.k), " and cache.v=",
                                                   Hex(cache.v), " must both be set"));
  }
  if (cache.dtype != args.k.dtype && cache.dtype != DType::kFloat8E4m3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cache.dtype=", static_cast<int>(cache.dtype), " must be k's dtype (",
        static_cast<int>(args.k.dtype), ") or fp8 e4m3 (", static_cast<int>(DType::kFloat8E4m3),
        ")"));
  }
  if (!Aligned(cache.k, ElementSize(cache.dtype)) || !Aligned(cache.v, ElementSize(cache.dtype))) {
    return absl::InvalidArgumentError(absl::StrCat("cache.k=", Hex(cache.k), " / cache.v=",
                                                   Hex(cache.v),
                                                   " are not aligned to the element size"));
  }
  if (cache.num_blocks < 1 || cache.block_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("cache.num_blocks=", cache.num_blocks,
                                                   " and cache.block_size=", cache.block_size,
                                                   " must be at least 1"));
  }
  int64_t num_slots = 0;
  if (!MulAdd(cache.num_blocks, cache.block_size, 0, &num_slots)) {
    return absl::InvalidArgumentError(absl::StrCat("cache.num_blocks=", cache.num_blocks,
                                                   " * block_size=", cache.block_size,
                                                   " overflows int64"));
  }
  if (cache.num_heads != args.k.num_heads) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cache.num_heads=", cache.num_heads, " differs from k.num_heads=", args.k.num_heads));
  }
  if (cache.head_dim != head_dim) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cache.head_dim=", cache.head_dim, " differs from spec.head_dim=", head_dim));
  }
  MROPE_RETURN_IF_ERROR(ValidateCacheLayout(cache, extent));
  if (cache.dtype == DType::kFloat8E4m3) {
    MROPE_RETURN_IF_ERROR(ValidateScale(cache.k_scale, "cache.k_scale"));
    MROPE_RETURN_IF_ERROR(ValidateScale(cache.v_scale, "cache.v_scale"));
  }
  return absl::OkStatus();
}

ByteRange RangeOf(const HeadsView& v, const char* name) {
  if (v.num_tokens == 0 || v.num_heads == 0) return {0, 0, name};
  const int64_t extent = (v.num_tokens - 1) * (v.num_tokens > 1 ? v.token_stride : 0) +
                         (v.num_heads - 1) * (v.num_heads > 1 ? v.head_stride : 0) + v.head_dim;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(v.data);
  return {begin, begin + static_cast<uintptr_t>(extent * ElementSize(v.dtype)), name};
}

// Every written view against every other view it does not alias (ValidateDisjointHeads:
// interleaved slices of a fused qkv buffer pass when their rows are disjoint), and the cache
// ranges against everything.
absl::Status ValidateNoOverlap(const FusedMropeArgs& args, const HeadsView& q_written,
                               bool cache_written, int64_t cache_extent) {
  std::vector<std::pair<HeadsView, const char*>> inputs = {{args.q, "q"}, {args.k, "k"}};
  if (cache_written) inputs.push_back({args.v, "v"});
  // written[0] may alias inputs[0] (q), written[1] inputs[1] (k).
  std::vector<std::pair<HeadsView, const char*>> written = {
      {q_written, args.q_out.data != nullptr ? "q_out" : "q (in place)"}};
  if (args.k_out.data != nullptr) written.push_back({args.k_out, "k_out"});
  for (size_t w = 0; w < written.size(); ++w) {
    const auto& [out, out_name] = written[w];
    for (size_t i = 0; i < inputs.size(); ++i) {
      const auto& [in, in_name] = inputs[i];
      // In place (q_out is q, k_out is k): each element is read, then written, by one lane.
      if (i == w && SameView(out, in)) continue;
      const absl::Status disjoint = ValidateDisjointHeads(out, in);
      if (!disjoint.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(out_name, " overlaps ", in_name, ": ", disjoint.message()));
      }
    }
  }
  if (written.size() == 2) {
    const absl::Status disjoint = ValidateDisjointHeads(written[0].first, written[1].first);
    if (!disjoint.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(written[0].second, " overlaps k_out: ",
                                                     disjoint.message()));
    }
  }
  if (!cache_written) return absl::OkStatus();
  const uintptr_t cache_bytes =
      static_cast<uintptr_t>(cache_extent * ElementSize(args.cache.dtype));
  const ByteRange k_cache{reinterpret_cast<uintptr_t>(args.cache.k),
                          reinterpret_cast<uintptr_t>(args.cache.k) + cache_bytes, "cache.k"};
  const ByteRange v_cache{reinterpret_cast<uintptr_t>(args.cache.v),
                          reinterpret_cast<uintptr_t>(args.cache.v) + cache_bytes, "cache.v"};
  std::vector<ByteRange> others;
  for (const auto& [view, name] : inputs) others.push_back(RangeOf(view, name));
  for (const auto& [view, name] : written) others.push_back(RangeOf(view, name));
  others.push_back(v_cache);  // checked against k_cache only
  for (const ByteRange& cache : {k_cache, v_cache}) {
    for (const ByteRange& other : others) {
      if (other.name == cache.name || !Overlap(cache, other)) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          cache.name, " [", Hex(reinterpret_cast<void*>(cache.begin)), ", ",
          Hex(reinterpret_cast<void*>(cache.end)), ") overlaps ", other.name));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateFusedMropeArgs(const RotarySpec& spec, const FusedMropeArgs& args) {
  const int64_t num_tokens = args.q.num_tokens;
  MROPE_RETURN_IF_ERROR(kernel_internal::ValidateRotarySources(
      spec, args.positions, args.sequence_delta, args.table, args.direction, num_tokens));
  MROPE_RETURN_IF_ERROR(kernel_internal::ValidateQk(args.q, args.k, spec.head_dim));

  HeadsView q_written = args.q;
  if (args.q_out.data != nullptr) {
    MROPE_RETURN_IF_ERROR(ValidateHeads(args.q_out, "q_out", spec.head_dim, /*fp8_allowed=*/true));
    MROPE_RETURN_IF_ERROR(ValidateSameShape(args.q_out, "q_out", args.q, "q"));
    if (args.q_out.dtype == DType::kFloat8E4m3) {
      MROPE_RETURN_IF_ERROR(ValidateScale(args.q_scale, "q_scale"));
    } else if (args.q_out.dtype != args.q.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("q_out.dtype=", static_cast<int>(args.q_out.dtype),
                       " must be q's dtype or fp8 e4m3"));
    }
    q_written = args.q_out;
  }
  if (args.k_out.data != nullptr) {
    MROPE_RETURN_IF_ERROR(ValidateHeads(args.k_out, "k_out", spec.head_dim));
    MROPE_RETURN_IF_ERROR(ValidateSameShape(args.k_out, "k_out", args.k, "k"));
    if (args.k_out.dtype != args.k.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("k_out.dtype=", static_cast<int>(args.k_out.dtype),
                       " differs from k.dtype=", static_cast<int>(args.k.dtype)));
    }
  }
  MROPE_RETURN_IF_ERROR(ValidateNorm(args.q_norm, "q_norm", spec.head_dim));
  MROPE_RETURN_IF_ERROR(ValidateNorm(args.k_norm, "k_norm", spec.head_dim));
  if (args.direction == RotationDirection::kInverse &&
      (args.q_norm.form != QkNormForm::kNone || args.k_norm.form != QkNormForm::kNone)) {
    return absl::InvalidArgumentError(
        "direction=kInverse with a norm: only the rotary's backward is provided (set q_norm and "
        "k_norm to kNone)");
  }

  const bool cache_written = args.slot_mapping != nullptr;
  int64_t cache_extent = 0;
  if (cache_written) {
    MROPE_RETURN_IF_ERROR(ValidateHeads(args.v, "v", spec.head_dim));
    if (args.v.dtype != args.k.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("v.dtype=", static_cast<int>(args.v.dtype),
                       " differs from k.dtype=", static_cast<int>(args.k.dtype)));
    }
    MROPE_RETURN_IF_ERROR(ValidateSameShape(args.v, "v", args.k, "k"));
    MROPE_RETURN_IF_ERROR(ValidateCache(args, spec.head_dim, &cache_extent));
  } else if (args.k_out.data == nullptr) {
    return absl::InvalidArgumentError(
        "neither slot_mapping nor k_out is set: the rotated k would be dropped");
  }
  if (num_tokens > 0) {
    MROPE_RETURN_IF_ERROR(ValidateNoOverlap(args, q_written, cache_written, cache_extent));
  }
  return kernel_internal::ValidateErrorFlag(args.error_flag);
}

}  // namespace mrope
