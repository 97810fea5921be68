#ifndef MROPE_SERVICE_COMPARE_H_
#define MROPE_SERVICE_COMPARE_H_

// One prompt under several conventions side by side (`mrope explain --compare`,
// Model.compare in Python): each row's deltas and first decode position per convention, the
// first token where the positions diverge, and the convention rules that differ. Train/serve
// skew made visible: a pipeline asserts that its preprocessing matches its serving engine.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mrope/positions/model_config.h"
#include "mrope/service/model_spec.h"
#include "mrope/service/position_service.h"

namespace mrope {

struct ConventionComparison {
  bool agree = true;   // same positions, deltas and first decode positions under all
  std::string report;  // the table, in words
};

// Plans `prompt` under each of `conventions` (at least two, each one the family implements),
// with each convention's own Qwen2.5-VL video time (ConventionRules::reference_video_time).
absl::StatusOr<ConventionComparison> CompareConventions(const ModelSpec& spec,
                                                        const Prompt& prompt,
                                                        absl::Span<const Convention> conventions);

// "hf_v4,hf_v5_2,vllm" as conventions (ParseConvention's names).
absl::StatusOr<std::vector<Convention>> ParseConventionList(absl::string_view list);

}  // namespace mrope

#endif  // MROPE_SERVICE_COMPARE_H_
