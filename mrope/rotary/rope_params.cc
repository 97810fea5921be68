#include "mrope/rotary/rope_params.h"

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/axis_map.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_scaling.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {
namespace {

bool IsPositive(double x) { return std::isfinite(x) && x > 0.0; }

// Fuzzer finding (tests/regression/rotary_regression_test.cc): the frequency base is rounded to
// float32 (as torch does) for TorchPowf, which gives NaN above ~2.55e38 and converted inf / NaN
// to int (undefined behaviour). Bases are now bounded by kMaxRopeBase.
bool BaseInRange(double base) { return base <= kMaxRopeBase; }

template <typename T>
absl::Status Invalid(absl::string_view prefix, absl::string_view key, absl::string_view rule,
                     T value) {
  return absl::InvalidArgumentError(absl::StrCat(prefix, key, " must be ", rule, ", got ", value));
}

bool UsesFactor(RopeType type) {
  return type == RopeType::kLinear || type == RopeType::kNtk || type == RopeType::kDynamic ||
         type == RopeType::kYarn || type == RopeType::kLlama3;
}

bool UsesOriginalMax(RopeType type) {
  return type == RopeType::kDynamic || type == RopeType::kYarn || type == RopeType::kLlama3 ||
         type == RopeType::kLongRope;
}

absl::Status ValidateExtFactors(const std::vector<float>& factors, int num_pairs,
                                absl::string_view prefix, absl::string_view key) {
  if (static_cast<int64_t>(factors.size()) != num_pairs) {
    return absl::InvalidArgumentError(absl::StrCat(
        prefix, key, " must have rotary_dim / 2 = ", num_pairs, " entries, got ", factors.size()));
  }
  for (size_t j = 0; j < factors.size(); ++j) {
    if (!IsPositive(factors[j])) {
      return Invalid(prefix, absl::StrCat(key, "[", j, "]"), "a finite number > 0", factors[j]);
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateMethod(const RopeParameters& params, absl::string_view prefix) {
  const RopeScaling& s = params.scaling;
  if (UsesFactor(s.type) && !IsPositive(s.factor)) {
    return Invalid(prefix, "factor", "a finite number > 0", s.factor);
  }
  if ((s.type == RopeType::kNtk || s.type == RopeType::kDynamic) && s.rotary_dim < 4) {
    return absl::InvalidArgumentError(absl::StrCat("rotary_dim must be >= 4 for rope_type '",
                                                   RopeTypeName(s.type), "', got ", s.rotary_dim));
  }
  if (s.type == RopeType::kNtk &&
      !BaseInRange(NtkScaledTheta(s.theta, s.factor, s.rotary_dim))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rope_theta * ", prefix, "factor^(d / (d - 2)) = ",
        NtkScaledTheta(s.theta, s.factor, s.rotary_dim), " exceeds ", kMaxRopeBase));
  }
  if (UsesOriginalMax(s.type) && s.original_max_position_embeddings <= 0) {
    return Invalid(prefix, "original_max_position_embeddings", "> 0",
                   s.original_max_position_embeddings);
  }
  switch (s.type) {
    case RopeType::kYarn:
      if (!IsPositive(s.beta_slow)) {
        return Invalid(prefix, "beta_slow", "a finite number > 0", s.beta_slow);
      }
      if (!std::isfinite(s.beta_fast) || s.beta_fast <= s.beta_slow) {
        return Invalid(prefix, "beta_fast", absl::StrCat("finite and > beta_slow = ", s.beta_slow),
                       s.beta_fast);
      }
      break;
    case RopeType::kLlama3:
      if (!IsPositive(s.low_freq_factor)) {
        return Invalid(prefix, "low_freq_factor", "a finite number > 0", s.low_freq_factor);
      }
      if (!std::isfinite(s.high_freq_factor) || s.high_freq_factor <= s.low_freq_factor) {
        return Invalid(prefix, "high_freq_factor",
                       absl::StrCat("finite and > low_freq_factor = ", s.low_freq_factor),
                       s.high_freq_factor);
      }
      break;
    case RopeType::kLongRope:
      MROPE_RETURN_IF_ERROR(
          ValidateExtFactors(params.short_factor, s.rotary_dim / 2, prefix, "short_factor"));
      MROPE_RETURN_IF_ERROR(
          ValidateExtFactors(params.long_factor, s.rotary_dim / 2, prefix, "long_factor"));
      break;
    default:
      break;
  }
  return absl::OkStatus();
}

// inv_freq with LongRoPE's per-pair factors `ext` (unused by the other methods); `params` must
// have passed the checks above.
std::vector<float> InvFreqWith(const RopeParameters& params, int64_t seq_len,
                               const std::vector<float>& ext) {
  const RopeScaling& s = params.scaling;
  const bool longrope = s.type == RopeType::kLongRope;
  std::vector<float> inv_freq(s.rotary_dim / 2);
  for (int j = 0; j < static_cast<int>(inv_freq.size()); ++j) {
    inv_freq[j] = ScaledInvFreq(s, j, seq_len, longrope ? ext[j] : 1.0f);
  }
  return inv_freq;
}

// Fuzzer finding (tests/regression/rotary_regression_test.cc): values that are valid doubles
// can still overflow in float32 (a linear factor of 5e-312 is 0 as a float, so inv / factor =
// inf, and cos/sin NaN). Every inverse frequency must be finite.
absl::Status CheckFinite(const std::vector<float>& inv_freq, const RopeParameters& params,
                         absl::string_view prefix) {
  for (size_t j = 0; j < inv_freq.size(); ++j) {
    if (!std::isfinite(inv_freq[j])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "rope_type '", RopeTypeName(params.scaling.type), "' with rope_theta ",
          params.scaling.theta, " and ", prefix, "factor ", params.scaling.factor,
          " gives inv_freq[", j, "] = ", inv_freq[j], " (not finite in float32)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view RopeTypeName(RopeType type) {
  switch (type) {
    case RopeType::kDefault:
      return "default";
    case RopeType::kLinear:
      return "linear";
    case RopeType::kNtk:
      return "ntk";
    case RopeType::kDynamic:
      return "dynamic";
    case RopeType::kYarn:
      return "yarn";
    case RopeType::kLlama3:
      return "llama3";
    case RopeType::kLongRope:
      return "longrope";
  }
  return "unknown";
}

absl::string_view MropeLayoutName(MropeLayout layout) {
  switch (layout) {
    case MropeLayout::kBlocked:
      return "blocked";
    case MropeLayout::kInterleaved:
      return "interleaved";
    case MropeLayout::kHwAlternatingThenT:
      return "hw_alternating_then_t";
    case MropeLayout::kXd:
      return "xd";
    case MropeLayout::kPanguInterleaved:
      return "pangu_interleaved";
  }
  return "unknown";
}

absl::StatusOr<MropeLayout> MropeLayoutFromName(absl::string_view name) {
  for (MropeLayout layout :
       {MropeLayout::kBlocked, MropeLayout::kInterleaved, MropeLayout::kHwAlternatingThenT,
        MropeLayout::kXd, MropeLayout::kPanguInterleaved}) {
    if (MropeLayoutName(layout) == name) return layout;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown mrope layout '", name,
                   "'; known: blocked, interleaved, hw_alternating_then_t, xd, pangu_interleaved"));
}

absl::StatusOr<RopeType> RopeTypeFromName(absl::string_view name) {
  if (name == "mrope") return RopeType::kDefault;  // Qwen2-VL checkpoints; HF maps it to default
  for (RopeType type : {RopeType::kDefault, RopeType::kLinear, RopeType::kNtk, RopeType::kDynamic,
                        RopeType::kYarn, RopeType::kLlama3, RopeType::kLongRope}) {
    if (name == RopeTypeName(type)) return type;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported rope_type '", name,
                   "' (expected default, mrope, linear, ntk, dynamic, yarn, llama3 or longrope)"));
}

absl::Status ValidateRopeParameters(const RopeParameters& params,
                                    absl::string_view scaling_prefix) {
  if (params.head_dim < 1 || params.head_dim > kMaxHeadDim) {
    return Invalid("", "head_dim", absl::StrCat("in [1, ", kMaxHeadDim, "]"), params.head_dim);
  }
  const RopeScaling& s = params.scaling;
  if (s.rotary_dim < 2 || s.rotary_dim > params.head_dim || s.rotary_dim % 2 != 0) {
    return Invalid("", "rotary_dim (int(head_dim * partial_rotary_factor))",
                   absl::StrCat("even and in [2, head_dim = ", params.head_dim, "]"), s.rotary_dim);
  }
  if (!std::isfinite(s.theta) || s.theta <= 1.0 || !BaseInRange(s.theta)) {
    return Invalid("", "rope_theta", absl::StrCat("a finite number > 1 and <= ", kMaxRopeBase),
                   s.theta);
  }
  if (!IsPositive(params.attention_scaling)) {
    return Invalid(scaling_prefix, "attention_factor", "a finite number > 0",
                   params.attention_scaling);
  }
  MROPE_RETURN_IF_ERROR(ValidateMethod(params, scaling_prefix));
  if (params.mrope_layout == MropeLayout::kPanguInterleaved && !params.mrope_section.empty() &&
      s.type != RopeType::kDefault) {
    // vLLM's openPangu code replaces the rope_type of interleaved sections ("openpangu"):
    // MRotaryEmbeddingInterleaved scales nothing, so a scaled rotary would not be the model's.
    return absl::InvalidArgumentError(absl::StrCat(
        scaling_prefix, "rope_type '", RopeTypeName(s.type),
        "': pangu_interleaved sections (vLLM's MRotaryEmbeddingInterleaved) take unscaled RoPE, "
        "vLLM drops the rope_type; only default is supported"));
  }
  MROPE_RETURN_IF_ERROR(BuildAxisMap(params).status());
  // At seq_len 0 (dynamic NTK's base grows later; ComputeInvFreq checks it), with both of
  // LongRoPE's factor lists.
  MROPE_RETURN_IF_ERROR(
      CheckFinite(InvFreqWith(params, 0, params.short_factor), params, scaling_prefix));
  if (s.type == RopeType::kLongRope) {
    MROPE_RETURN_IF_ERROR(
        CheckFinite(InvFreqWith(params, 0, params.long_factor), params, scaling_prefix));
  }
  return absl::OkStatus();
}

absl::StatusOr<AxisMap> BuildAxisMap(const RopeParameters& params) {
  const int num_pairs = params.scaling.rotary_dim / 2;
  if (params.mrope_section.empty()) return TemporalAxisMap(num_pairs);
  return MropeAxisMap(params.mrope_layout, params.mrope_section, num_pairs);
}

absl::StatusOr<std::vector<float>> ComputeInvFreq(const RopeParameters& params, int64_t seq_len) {
  MROPE_RETURN_IF_ERROR(ValidateRopeParameters(params));
  if (seq_len < 0) return Invalid("", "seq_len", ">= 0", seq_len);
  const RopeScaling& s = params.scaling;
  if (s.type == RopeType::kDynamic) {
    // The dynamic NTK base grows with the sequence length (see BaseInRange).
    const double base = DynamicNtkTheta(s.theta, s.factor, seq_len,
                                        s.original_max_position_embeddings, s.rotary_dim);
    if (!BaseInRange(base)) {
      return absl::InvalidArgumentError(absl::StrCat("dynamic NTK base ", base, " at seq_len ",
                                                     seq_len, " exceeds ", kMaxRopeBase));
    }
  }
  const std::vector<float>& ext =
      LongRopeUsesLongFactor(seq_len, s.original_max_position_embeddings) ? params.long_factor
                                                                          : params.short_factor;
  std::vector<float> inv_freq = InvFreqWith(params, seq_len, ext);
  MROPE_RETURN_IF_ERROR(CheckFinite(inv_freq, params, ""));
  return inv_freq;
}

absl::StatusOr<RotarySpec> BuildRotarySpec(const RopeParameters& params, RotaryLayout layout,
                                           int64_t seq_len) {
  if (layout != RotaryLayout::kNeox && layout != RotaryLayout::kGptj) {
    return Invalid("", "layout", "kNeox or kGptj", static_cast<int>(layout));
  }
  RotarySpec spec;
  MROPE_ASSIGN_OR_RETURN(spec.inv_freq, ComputeInvFreq(params, seq_len));
  MROPE_ASSIGN_OR_RETURN(spec.axis_map, BuildAxisMap(params));
  spec.head_dim = params.head_dim;
  spec.rotary_dim = params.scaling.rotary_dim;
  spec.layout = layout;
  spec.attention_scaling = params.attention_scaling;
  return spec;
}

}  // namespace mrope
