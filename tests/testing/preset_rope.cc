#include "tests/testing/preset_rope.h"

#include "absl/strings/match.h"
#include "google/protobuf/struct.pb.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "mrope/service/model_spec.h"

namespace mrope {

RopeParameters PresetRopeUnder(const ModelConfig& preset, absl::string_view rope_scaling) {
  google::protobuf::Value object = PresetRopeObject(preset);
  auto& fields = *object.mutable_struct_value()->mutable_fields();
  fields["max_position_embeddings"].set_number_value(256);
  if (!rope_scaling.empty()) {
    auto scaling = ParseJson(rope_scaling);
    EXPECT_TRUE(scaling.ok()) << scaling.status();
    if (scaling.ok()) fields["rope_scaling"] = *scaling;
    // LongRoPE's original length sits at the top level (mrope/rotary/rope_config.h).
    if (absl::StrContains(rope_scaling, "longrope")) {
      fields["original_max_position_embeddings"].set_number_value(64);
    }
  }
  auto rope = RopeFromConfigObject(preset, object, "");
  EXPECT_TRUE(rope.ok()) << rope.status();
  return rope.ok() ? *rope : RopeParameters{};
}

}  // namespace mrope
