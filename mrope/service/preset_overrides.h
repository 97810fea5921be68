#ifndef MROPE_SERVICE_PRESET_OVERRIDES_H_
#define MROPE_SERVICE_PRESET_OVERRIDES_H_

// A preset with some of its values replaced: what Python's Model.from_config(preset, overrides)
// and the C ABI's mrope_model_with_overrides build. The keys are the golden files' flat `config`
// names, the ones the preset's config.json would give:
//   position keys  the family's token ids (`<name>_token_id`, e.g. image_token_id),
//                  spatial_merge_size; temporal_merge_size (ERNIE); tokens_per_second and
//                  video_time_rounding ("scale_then_truncate" | "truncate_interval_first") where
//                  the family reads tokens_per_second (Qwen2.5-VL); position_id_per_seconds and
//                  seconds_per_chunk where it reads those (Omni)
//   rope keys      rope_theta, head_dim, hidden_size, num_attention_heads,
//                  partial_rotary_factor, max_position_embeddings,
//                  original_max_position_embeddings, mrope_section, mrope_interleaved, and
//                  rope_scaling (an object as in config.json: rope_type, factor, ...)
// The rope keys replace the preset's in the flat config object of its rotary values
// (PresetRopeObject, mrope/service/model_spec.h), which is then read as a config.json's
// (RopeFromConfigObject): the same defaults, precedence and checks, e.g. head_dim comes before
// hidden_size / num_attention_heads, and max_position_embeddings only matters to the scaled rope
// types. An mrope_interleaved the family's rotary code overrules (the 5.x families) is refused.
//
// Every override takes effect or is refused. A value equal to the preset's is a no-op and is
// accepted. A position key sets one value its family reads (a family is offered only those), so
// a different value is a different model. A rope key whose value differs from the preset's (or
// that the preset lacks) is refused when the model built with that key back at the preset's value
// (or without it) rotates alike: the same RotarySpec (dims, axis map, inv_freq bit for bit,
// attention scaling) at sequence length 1 and either side of each reference length, e.g.
// max_position_embeddings under the default rope type, hidden_size beside head_dim, a top-level
// original_max_position_embeddings under yarn. This test per key, rather than a rule per key,
// keeps the reader's precedence in one place (rope_config.h) and costs a few RotarySpecs.
// Every other key, a document that is not an object, a null, a wrong type or an invalid value
// is InvalidArgument naming the key (unknown and ineffective keys: listing the preset's keys).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "mrope/service/model_spec.h"

namespace mrope {

// `overrides`: a JSON object; `what` names it in messages ("overrides.spatial_merge_size ...").
absl::StatusOr<ModelSpec> PresetModelSpecWithOverrides(absl::string_view preset,
                                                       const google::protobuf::Value& overrides,
                                                       absl::string_view what = "overrides");

// The same with the overrides as JSON text.
absl::StatusOr<ModelSpec> PresetModelSpecWithOverrides(absl::string_view preset,
                                                       absl::string_view overrides_json);

// The position keys `preset` takes, in the header's order: the ones a checkpoint's config.json
// gives (token ids, merge and time scales) and video_time_rounding where the family reads it.
// An unknown preset is PresetConfig's error.
absl::StatusOr<std::vector<std::string>> PresetPositionKeys(absl::string_view preset);

}  // namespace mrope

#endif  // MROPE_SERVICE_PRESET_OVERRIDES_H_
