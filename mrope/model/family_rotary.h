#ifndef MROPE_MODEL_FAMILY_ROTARY_H_
#define MROPE_MODEL_FAMILY_ROTARY_H_

// A rotary golden case (mrope/rotary/rotary_case.h) run the way its reference model's family
// rotates: `mrope rotary --golden` and the rotary golden tests take the pairing, the mrope
// layout and the cos/sin layout from the family row (mrope/model/model_family.cc), so that the
// cases test the row, and the case's own config must agree with it.

#include "absl/status/statusor.h"
#include "mrope/rotary/hf_cos_sin.h"
#include "mrope/rotary/rotary_case.h"

namespace mrope {

// Sets c.layout and, when the case has sections, c.params.mrope_layout to those of the row of
// c.reference_model, and returns the row's cos/sin layout in the family's reference release
// (v4.57.6, or v5.2.0 for the families new in 5.x: where the golden cases come from). InvalidArgument when no row has that
// model_type, or when the case's config.rotate, mrope layout (config.mrope_layout, else
// mrope_interleaved) or config.cos_layout differs from the row's, naming both.
absl::StatusOr<CosSinLayout> UseFamilyRotary(RotaryCase& c);

}  // namespace mrope

#endif  // MROPE_MODEL_FAMILY_ROTARY_H_
