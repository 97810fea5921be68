#include "mrope/model/family_rotary.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "mrope/model/model_family.h"
#include "mrope/positions/model_config.h"
#include "mrope/rotary/hf_cos_sin.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/rotary_case.h"

namespace mrope {
namespace {

// config.rotate's names.
absl::string_view RotateName(RotaryLayout layout) {
  return layout == RotaryLayout::kGptj ? "interleaved_pairs" : "half";
}

absl::Status Disagree(const ModelFamilyInfo& row, absl::string_view field,
                      absl::string_view case_value, absl::string_view row_value) {
  return absl::InvalidArgumentError(absl::StrCat("config.", field, " is '", case_value,
                                                 "', but the ", row.name, " family's is '",
                                                 row_value, "' (mrope/model/model_family.cc)"));
}

// The release the family's golden rotary cases come from: its reference's (v4.57.6 for the
// transformers 4 families, v5.2.0 for those new in 5.x).
TransformersRelease ReferenceRelease(const ModelFamilyInfo& row) {
  return row.preset.convention == Convention::kHfV4 ? TransformersRelease{4, 57}
                                                    : TransformersRelease{5, 2};
}

}  // namespace

absl::StatusOr<CosSinLayout> UseFamilyRotary(RotaryCase& c) {
  const ModelFamilyInfo* row = FamilyForModelType(c.reference_model);
  if (row == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("reference_model '", c.reference_model, "' is no family's model_type"));
  }
  const RopePreset& rope = row->rope;
  if (c.layout != rope.layout) {
    return Disagree(*row, "rotate", RotateName(c.layout), RotateName(rope.layout));
  }
  if (!c.params.mrope_section.empty() && c.params.mrope_layout != rope.mrope_layout) {
    return Disagree(*row, "mrope_layout", MropeLayoutName(c.params.mrope_layout),
                    MropeLayoutName(rope.mrope_layout));
  }
  const CosSinLayout cos_layout = HfCosSinLayout(*row, ReferenceRelease(*row));
  if (c.cos_layout.has_value() && *c.cos_layout != cos_layout) {
    return Disagree(*row, "cos_layout", CosSinLayoutName(*c.cos_layout),
                    CosSinLayoutName(cos_layout));
  }
  c.layout = rope.layout;
  if (!c.params.mrope_section.empty()) c.params.mrope_layout = rope.mrope_layout;
  return cos_layout;
}

}  // namespace mrope
