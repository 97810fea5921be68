#ifndef MROPE_ROTARY_ROPE_CONFIG_H_
#define MROPE_ROTARY_ROPE_CONFIG_H_

// Reads RopeParameters from a model config given as JSON (google.protobuf.Value, see
// mrope/common/json.h), with the key names, defaults and precedence of HF transformers v4.57.6
// (checked on tests/golden/rotary_scaling_*).
//
// Where keys are looked up: the rope object `rope_parameters` (transformers v5) or else
// `rope_scaling` (v4) first, then the config's top level. So both an HF text config
// ({"rope_theta": 1e6, "head_dim": 128, "rope_scaling": {"type": "mrope", "mrope_section": [16,
// 24, 24]}}) and a flattened one (golden cases: {"rope_theta": ..., "rope_type": "default",
// "mrope_section": [...], ...}) work. Keys:
//   rope_type (or type)      default | mrope (= default) | linear | ntk | dynamic | yarn | llama3 |
//                            longrope; absent means default
//   rope_theta               required, > 1
//   head_dim                 or else RopeConfigRules::default_head_dim when set, else
//                            hidden_size / num_attention_heads; at most kMaxHeadDim
//   partial_rotary_factor    (0, 1], default 1; rotary_dim = int(head_dim * factor), even
//   max_position_embeddings  top level; the reference length L0 of dynamic (always) and of yarn
//                            and longrope (when no original length applies)
//   original_max_position_embeddings
//                            yarn: in the rope object, else L0 = max_position_embeddings;
//                            llama3: in the rope object, required; longrope: at TOP level only
//                            (Phi-3), and then factor = max_position_embeddings / it
//   factor                   required by linear, ntk, dynamic, yarn, llama3; longrope: used only
//                            without a top-level original_max_position_embeddings (then required
//                            unless attention_factor is given)
//   attention_factor         yarn, longrope: explicit cos/sin scale (default: the method's formula)
//   beta_fast, beta_slow     yarn, default 32 and 1
//   mscale, mscale_all_dim   yarn (DeepSeek attention factor), default unset
//   truncate                 yarn, default true
//   low_freq_factor, high_freq_factor   llama3, required
//   short_factor, long_factor           longrope, required, rotary_dim / 2 numbers each
//   mrope_section            [t, h, w] pairs summing to rotary_dim / 2; absent means 1-D RoPE
//   mrope_interleaved        default false (blocked sections); true:
//                            RopeConfigRules::interleaved_layout, by default kInterleaved.
//                            (ERNIE's layout is its family's, mrope/model/model_family.cc.)
// Other keys are ignored. Errors are InvalidArgument naming the key's path and value, e.g.
// "rope_scaling.factor must be a finite number > 0, got -2".

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"

namespace mrope {

// What a model's code decides beyond the config's keys (its family's row says it).
struct RopeConfigRules {
  // The sections' layout whatever mrope_interleaved says (a family whose rotary code decides
  // it: ERNIE's, HunYuan-VL's XD-RoPE).
  std::optional<MropeLayout> layout;
  // The layout mrope_interleaved true selects: Qwen3-VL's, or a family's own.
  MropeLayout interleaved_layout = MropeLayout::kInterleaved;
  // head_dim of a config without one (its config class's field default); 0: derived.
  int32_t default_head_dim = 0;
};

// The sections are checked against the layout they get.
absl::StatusOr<RopeParameters> ParseRopeParameters(const google::protobuf::Value& config,
                                                   const RopeConfigRules& rules = {});

}  // namespace mrope

#endif  // MROPE_ROTARY_ROPE_CONFIG_H_
