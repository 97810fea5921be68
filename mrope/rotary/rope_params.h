#ifndef MROPE_ROTARY_ROPE_PARAMS_H_
#define MROPE_ROTARY_ROPE_PARAMS_H_

// A model's rotary parameters (what HF keeps in rope_theta, head_dim, partial_rotary_factor and
// rope_scaling / rope_parameters), their validation, and the RotarySpec they produce: inv_freq
// for a sequence length, the attention scaling and the per-pair axis map.
// Parsing them from a JSON config is in mrope/rotary/rope_config.h.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_scaling.h"
#include "mrope/rotary/rotary_spec.h"

namespace mrope {

struct RopeParameters {
  int32_t head_dim = 0;  // D
  // Frequency formula: method, rotary_dim (= int(head_dim * partial_rotary_factor)), theta and
  // the method's resolved keys.
  RopeScaling scaling;
  // Multiplies cos and sin: YaRN / LongRoPE attention factor (explicit or derived), else 1.
  float attention_scaling = 1.0f;
  // LongRoPE only: per-pair factors, rotary_dim / 2 each (float32, as HF builds them).
  std::vector<float> short_factor;
  std::vector<float> long_factor;
  // M-RoPE sections in pairs, summing to rotary_dim / 2; empty means 1-D RoPE (every pair uses
  // axis t). `mrope_layout` says how they map pairs to axes (and the order of the entries:
  // [t, h, w], or [h, w, t] for kHwAlternatingThenT), see mrope/rotary/axis_map.h.
  std::vector<int32_t> mrope_section;
  MropeLayout mrope_layout = MropeLayout::kBlocked;
};

// HF names of the rope types ("default", "linear", "ntk", "dynamic", "yarn", "llama3",
// "longrope"); RopeTypeFromName also accepts "mrope" (Qwen2-VL checkpoints) as default.
absl::string_view RopeTypeName(RopeType type);
absl::StatusOr<RopeType> RopeTypeFromName(absl::string_view name);

// Names of the mrope layouts: "blocked", "interleaved", "hw_alternating_then_t", "xd",
// "pangu_interleaved" (the golden cases' config.mrope_layout).
absl::string_view MropeLayoutName(MropeLayout layout);
absl::StatusOr<MropeLayout> MropeLayoutFromName(absl::string_view name);

// Largest frequency base (rope_theta, and the NTK / dynamic NTK scaled base) accepted: far
// above published checkpoints (<= 1e8), far below where float32 pow breaks down (~2.5e38).
inline constexpr double kMaxRopeBase = 1e30;

// Validates every field the chosen method uses. Errors name the HF key; keys that live in
// rope_scaling / rope_parameters are prefixed with `scaling_prefix` (e.g. "rope_scaling."), so a
// message reads "rope_scaling.factor must be > 0, got -2".
absl::Status ValidateRopeParameters(const RopeParameters& params,
                                    absl::string_view scaling_prefix = "");

// The per-pair axis table of `params` (MropeAxisMap of its layout, or all-t without sections).
absl::StatusOr<AxisMap> BuildAxisMap(const RopeParameters& params);

// inv_freq[j] for j < rotary_dim / 2 (see rope_scaling.h). `seq_len` is the current sequence
// length (HF: max position + 1); only dynamic NTK and LongRoPE depend on it. Validates first.
absl::StatusOr<std::vector<float>> ComputeInvFreq(const RopeParameters& params, int64_t seq_len);

// Everything the CPU reference and the kernel need for one model at one sequence length.
absl::StatusOr<RotarySpec> BuildRotarySpec(const RopeParameters& params, RotaryLayout layout,
                                           int64_t seq_len);

}  // namespace mrope

#endif  // MROPE_ROTARY_ROPE_PARAMS_H_
