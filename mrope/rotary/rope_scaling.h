#ifndef MROPE_ROTARY_ROPE_SCALING_H_
#define MROPE_ROTARY_ROPE_SCALING_H_

// The inverse-frequency formula of every RoPE scaling method, in the one place that plain C++ and
// nvcc both compile (functions are __host__ __device__ under nvcc).
//
//   inv_freq[j] = theta^(-2j/d),  j < d/2, d = rotary_dim
//
// Each method follows HF transformers (modeling_rope_utils.py, `rope_type` of rope_scaling /
// rope_parameters) and the float32 order of operations torch uses there. default, linear,
// dynamic, yarn, llama3 and longrope give HF v4.57.6's inv_freq bit for bit on the golden data
// (tests/golden/rotary_*; torch_powf.h has the pow); ntk, which v4.57.6 does not register,
// follows the same steps unchecked:
//   default   theta^(-2j/d)
//   linear    theta^(-2j/d) / s                                  (position interpolation)
//   ntk       (theta * s^(d/(d-2)))^(-2j/d)        the lowest frequency becomes theta_min / s,
//                                                  the highest (j = 0) stays 1
//   dynamic   ntk with s' = s*L/L0 - (s-1) when the sequence length L exceeds L0 =
//             max_position_embeddings (HF v4.57.6); plain theta otherwise
//   yarn      per pair, a ramp between interpolation (inv/s) and extrapolation (inv) over the
//             pairs between the correction dims of beta_fast and beta_slow; cos/sin scaled by
//             the attention factor (default 0.1*ln(s) + 1)
//   llama3    wavelength bands: wavelen < L0/high_freq_factor keeps inv, wavelen >
//             L0/low_freq_factor uses inv/s, and a smooth interpolation in between
//   longrope  theta^(-2j/d) / ext[j], ext = long_factor when L > L0 else short_factor;
//             cos/sin scaled by sqrt(1 + ln(s)/ln(L0)) by default
//
// Like rope_math.h, host code including this header must be compiled with -ffp-contract=off.
//
// Inputs are assumed valid (see ValidateRopeParameters in rope_params.h): rotary_dim even and
// >= 2 (>= 4 for ntk/dynamic), theta > 1, factor > 0, positive original_max_position_embeddings
// where used, beta_fast > beta_slow > 0, high_freq_factor > low_freq_factor > 0.

#include <cfloat>
#include <cstdint>

#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/torch_powf.h"

namespace mrope {

// `rope_type` of HF rope_scaling / rope_parameters ("mrope" is read as default).
enum class RopeType : uint8_t {
  kDefault = 0,
  kLinear = 1,
  kNtk = 2,
  kDynamic = 3,
  kYarn = 4,
  kLlama3 = 5,
  kLongRope = 6,
};

// Resolved scalar parameters of the frequency formula (a plain struct: copyable into kernels).
// LongRoPE's per-pair factors are passed separately (ScaledInvFreq's `ext_factor`).
struct RopeScaling {
  RopeType type = RopeType::kDefault;
  int32_t rotary_dim = 0;                        // d
  double theta = 10000.0;                        // rope_theta
  double factor = 1.0;                           // s: linear, ntk, dynamic, yarn, llama3
  // L0, the reference length of dynamic, yarn, llama3 and longrope (for dynamic it is the
  // model's max_position_embeddings, as HF v4.57.6 uses; see rope_config.h for the others).
  int64_t original_max_position_embeddings = 0;
  double beta_fast = 32.0;                       // yarn
  double beta_slow = 1.0;                        // yarn
  bool truncate = true;  // yarn: floor/ceil the correction range (HF "truncate", default true)
  double low_freq_factor = 1.0;   // llama3
  double high_freq_factor = 4.0;  // llama3
};

inline constexpr double kPi = 3.14159265358979323846;

// The exponent 2j/d as torch computes it: float32(float32(2j) / float32(d)).
MROPE_HOST_DEVICE inline float RopeExponent(int pair, int rotary_dim) {
  return DivRounded(static_cast<float>(2 * pair), static_cast<float>(rotary_dim));
}

// theta^(2j/d) in float32 (theta is rounded to float32 first, as torch does with a Python scalar).
MROPE_HOST_DEVICE inline float PairWavelengthBase(double theta, int pair, int rotary_dim) {
  return TorchPowf(static_cast<float>(theta), RopeExponent(pair, rotary_dim));
}

// Default RoPE: float32(1 / theta^(2j/d)).
MROPE_HOST_DEVICE inline float BaseInvFreq(double theta, int pair, int rotary_dim) {
  return DivRounded(1.0f, PairWavelengthBase(theta, pair, rotary_dim));
}

// NTK-aware base: theta * s^(d/(d-2)) (in double, like HF's Python arithmetic).
MROPE_HOST_DEVICE inline double NtkScaledTheta(double theta, double factor, int rotary_dim) {
  const double d = rotary_dim;
  return theta * ::pow(factor, d / (d - 2.0));
}

// Dynamic NTK base for the current sequence length L: unchanged up to L0 (HF v4.57.6: the
// model's max_position_embeddings), then the NTK base for the effective factor s*L/L0 - (s-1),
// which is 1 at L = L0 and grows linearly with L. HF recomputes it at run time with L a torch
// scalar tensor, so every step is float32: the product, quotient and difference rounded one at a
// time, the power as float32(pow(double(x), d/(d-2))) (torch's scalar-exponent path), then
// float32(theta) times it. The result is that float32 value.
MROPE_HOST_DEVICE inline double DynamicNtkTheta(double theta, double factor, int64_t seq_len,
                                                int64_t original_max_position_embeddings,
                                                int rotary_dim) {
  if (seq_len <= original_max_position_embeddings) return theta;
  // A factor beyond float range (no defined conversion) gives a base far above kMaxRopeBase.
  if (factor > FLT_MAX) return theta * factor;
  const float effective_factor =
      AddRounded(DivRounded(MulRounded(static_cast<float>(factor), static_cast<float>(seq_len)),
                            static_cast<float>(original_max_position_embeddings)),
                 -static_cast<float>(factor - 1.0));
  const double d = rotary_dim;
  const double growth = ::pow(static_cast<double>(effective_factor), d / (d - 2.0));
  if (growth > FLT_MAX) return theta * growth;  // likewise
  return MulRounded(static_cast<float>(theta), static_cast<float>(growth));
}

// YaRN: the (fractional) pair index whose wavelength makes `num_rotations` turns over L0.
MROPE_HOST_DEVICE inline double YarnCorrectionDim(double num_rotations, int rotary_dim,
                                                  double theta,
                                                  int64_t original_max_position_embeddings) {
  return rotary_dim *
         ::log(static_cast<double>(original_max_position_embeddings) /
               (num_rotations * 2.0 * kPi)) /
         (2.0 * ::log(theta));
}

// YaRN ramp bounds: pairs below `low` extrapolate (keep inv), pairs above `high` interpolate
// (inv/s). low = max(floor(dim(beta_fast)), 0), high = min(ceil(dim(beta_slow)), d - 1)
// (no floor/ceil when truncate is false).
struct YarnRange {
  double low;
  double high;
};
MROPE_HOST_DEVICE inline YarnRange YarnCorrectionRange(const RopeScaling& s) {
  double low =
      YarnCorrectionDim(s.beta_fast, s.rotary_dim, s.theta, s.original_max_position_embeddings);
  double high =
      YarnCorrectionDim(s.beta_slow, s.rotary_dim, s.theta, s.original_max_position_embeddings);
  if (s.truncate) {
    low = ::floor(low);
    high = ::ceil(high);
  }
  return {low < 0.0 ? 0.0 : low, high > s.rotary_dim - 1 ? s.rotary_dim - 1.0 : high};
}

// YaRN linear ramp of pair j: clamp((j - low) / (high - low), 0, 1) in float32; 0 means pure
// extrapolation (inv), 1 pure interpolation (inv/s). high == low is widened by 0.001 as in HF.
MROPE_HOST_DEVICE inline float YarnRamp(int pair, YarnRange range) {
  const double high = range.high == range.low ? range.high + 0.001 : range.high;
  const float x = DivRounded(AddRounded(static_cast<float>(pair), -static_cast<float>(range.low)),
                             static_cast<float>(high - range.low));
  return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
}

// YaRN inv_freq: interpolation * ramp + extrapolation * (1 - ramp), HF's float32 steps.
MROPE_HOST_DEVICE inline float YarnInvFreq(const RopeScaling& s, int pair) {
  const float pos_freq = PairWavelengthBase(s.theta, pair, s.rotary_dim);
  const float extrapolation = DivRounded(1.0f, pos_freq);
  const float interpolation = DivRounded(1.0f, MulRounded(static_cast<float>(s.factor), pos_freq));
  const float extrapolation_weight = AddRounded(1.0f, -YarnRamp(pair, YarnCorrectionRange(s)));
  return AddRounded(MulRounded(interpolation, AddRounded(1.0f, -extrapolation_weight)),
                    MulRounded(extrapolation, extrapolation_weight));
}

// YaRN magnitude scale: 0.1 * mscale * ln(s) + 1 for s > 1, else 1.
MROPE_HOST_DEVICE inline double YarnMscale(double factor, double mscale) {
  return factor <= 1.0 ? 1.0 : 0.1 * mscale * ::log(factor) + 1.0;
}

// YaRN default attention factor: mscale(s, mscale) / mscale(s, mscale_all_dim) when both are
// nonzero (DeepSeek style), else mscale(s, 1) = 0.1*ln(s) + 1.
MROPE_HOST_DEVICE inline double YarnAttentionFactor(double factor, double mscale,
                                                    double mscale_all_dim) {
  if (mscale != 0.0 && mscale_all_dim != 0.0) {
    return YarnMscale(factor, mscale) / YarnMscale(factor, mscale_all_dim);
  }
  return YarnMscale(factor, 1.0);
}

// Llama 3.1 inv_freq, HF's float32 steps: wavelen = 2*pi / inv; short wavelengths keep inv, long
// ones use inv/s, and in between inv * ((1 - smooth)/s + smooth) with
// smooth = (L0/wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor).
MROPE_HOST_DEVICE inline float Llama3InvFreq(const RopeScaling& s, int pair) {
  const float inv = BaseInvFreq(s.theta, pair, s.rotary_dim);
  // torch evaluates scalar / tensor as reciprocal(tensor) * scalar.
  const float wavelen = MulRounded(DivRounded(1.0f, inv), static_cast<float>(2.0 * kPi));
  const double old_context = static_cast<double>(s.original_max_position_embeddings);
  const float low_freq_wavelen = static_cast<float>(old_context / s.low_freq_factor);
  const float high_freq_wavelen = static_cast<float>(old_context / s.high_freq_factor);
  const float factor = static_cast<float>(s.factor);
  if (wavelen < high_freq_wavelen) return inv;
  if (wavelen > low_freq_wavelen) return DivRounded(inv, factor);
  const float smooth =
      DivRounded(AddRounded(MulRounded(DivRounded(1.0f, wavelen), static_cast<float>(old_context)),
                            -static_cast<float>(s.low_freq_factor)),
                 static_cast<float>(s.high_freq_factor - s.low_freq_factor));
  return AddRounded(DivRounded(MulRounded(AddRounded(1.0f, -smooth), inv), factor),
                    MulRounded(smooth, inv));
}

// LongRoPE inv_freq: float32(1 / (ext * theta^(2j/d))).
MROPE_HOST_DEVICE inline float LongRopeInvFreq(double theta, float ext_factor, int pair,
                                               int rotary_dim) {
  return DivRounded(1.0f, MulRounded(ext_factor, PairWavelengthBase(theta, pair, rotary_dim)));
}

// LongRoPE uses long_factor once the sequence is longer than L0, short_factor otherwise.
MROPE_HOST_DEVICE inline bool LongRopeUsesLongFactor(int64_t seq_len,
                                                     int64_t original_max_position_embeddings) {
  return seq_len > original_max_position_embeddings;
}

// LongRoPE default attention factor: sqrt(1 + ln(s) / ln(L0)) for s > 1, else 1.
MROPE_HOST_DEVICE inline double LongRopeAttentionFactor(double factor,
                                                        int64_t original_max_position_embeddings) {
  if (factor <= 1.0) return 1.0;
  return ::sqrt(1.0 + ::log(factor) / ::log(static_cast<double>(original_max_position_embeddings)));
}

// inv_freq of pair j for any method. `seq_len` matters for dynamic (and, through the choice of
// `ext_factor`, LongRoPE); `ext_factor` is LongRoPE's short/long factor of pair j (else unused).
MROPE_HOST_DEVICE inline float ScaledInvFreq(const RopeScaling& s, int pair, int64_t seq_len,
                                             float ext_factor) {
  switch (s.type) {
    case RopeType::kLinear:
      return DivRounded(BaseInvFreq(s.theta, pair, s.rotary_dim), static_cast<float>(s.factor));
    case RopeType::kNtk:
      return BaseInvFreq(NtkScaledTheta(s.theta, s.factor, s.rotary_dim), pair, s.rotary_dim);
    case RopeType::kDynamic:
      return BaseInvFreq(DynamicNtkTheta(s.theta, s.factor, seq_len,
                                         s.original_max_position_embeddings, s.rotary_dim),
                         pair, s.rotary_dim);
    case RopeType::kYarn:
      return YarnInvFreq(s, pair);
    case RopeType::kLlama3:
      return Llama3InvFreq(s, pair);
    case RopeType::kLongRope:
      return LongRopeInvFreq(s.theta, ext_factor, pair, s.rotary_dim);
    case RopeType::kDefault:
    default:
      return BaseInvFreq(s.theta, pair, s.rotary_dim);
  }
}

}  // namespace mrope

#endif  // MROPE_ROTARY_ROPE_SCALING_H_
