#ifndef MROPE_MODEL_CONVENTIONS_H_
#define MROPE_MODEL_CONVENTIONS_H_

// Conventions by release: each convention is named by the first release of its reference
// whose values it reproduces ("transformers-5.3"; its short name, "hf_v5", stays an alias),
// and one table says, per family and convention, which releases it reproduces and how that
// was verified. "transformers==5.23.0" resolves to the convention covering that release.
// The CLI (`mrope conventions`, --convention), the service and Python read these.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mrope/model/model_family.h"
#include "mrope/positions/model_config.h"

namespace mrope {

// A range of releases of a convention's reference that the convention reproduces for a family.
struct ConventionRelease {
  ModelFamily family;
  Convention convention;
  absl::string_view first;     // the first release it reproduces, e.g. "5.3.0"
  absl::string_view last;      // the last release verified
  absl::string_view verified;  // how: release runs, the live tests' pinned release, golden files
};

// Every entry, grouped by family in table order (mrope/model/conventions.cc).
const std::vector<ConventionRelease>& ConventionReleases();

// The package a convention follows: "transformers" or "vllm".
absl::string_view ConventionReference(Convention convention);

// The convention's name by release, e.g. "transformers-5.3" (ConventionName is its short one).
absl::string_view ConventionReleaseName(Convention convention);

// The convention `family` follows for `spec`: "<reference>==<release>" (e.g.
// "transformers==5.23.0", "vllm==0.33.0") picks the convention whose range covers the release,
// else InvalidArgument naming the releases verified for the family; a convention name or alias
// (ParseConvention) must be one of the family's.
absl::StatusOr<Convention> ResolveConvention(ModelFamily family, absl::string_view spec);

// The preset of `family` under `convention`: the family's own or a variant, with the
// convention's reference video time rounding (e.g. qwen2_5_vl under hf_v4: "qwen2_5_vl_hf").
absl::StatusOr<std::string> ConventionPreset(ModelFamily family, Convention convention);

}  // namespace mrope

#endif  // MROPE_MODEL_CONVENTIONS_H_
