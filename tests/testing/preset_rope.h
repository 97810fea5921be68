#ifndef MROPE_TESTS_TESTING_PRESET_ROPE_H_
#define MROPE_TESTS_TESTING_PRESET_ROPE_H_

// A preset's rotary under another rope type, through the config.json reader. Its own library,
// built without the kernels' sanitizer flags: protobuf's inline map code instantiated in a
// -fsanitize=thread test library and called from the uninstrumented JSON library crashed.

#include "absl/strings/string_view.h"
#include "mrope/positions/model_config.h"
#include "mrope/rotary/rope_params.h"

namespace mrope {

// The rope of `preset` (its family row's, the rotating layer types' for Cohere Compass) with
// max_position_embeddings 256 and `rope_scaling` (a config.json rope_scaling object; empty: the
// default type; a LongRoPE object gets original_max_position_embeddings 64 at the top level, as
// the reader takes it).
RopeParameters PresetRopeUnder(const ModelConfig& preset, absl::string_view rope_scaling);

}  // namespace mrope

#endif  // MROPE_TESTS_TESTING_PRESET_ROPE_H_
