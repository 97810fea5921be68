#ifndef MROPE_CLI_EXPLAIN_COMMAND_H_
#define MROPE_CLI_EXPLAIN_COMMAND_H_

#include <ostream>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/cli_options.h"

namespace mrope {

// `mrope explain --config=X --request=R` (or --golden=CASE): the table of ExplainPlan
// (mrope/service/explain.h) for the prompt, to --output or `out`.
absl::Status RunExplain(const CliOptions& options, std::ostream& out);

// `mrope explain --compare=hf_v4,hf_v5_2,vllm ...`: the prompt under each convention
// (mrope/service/compare.h); true when they agree.
absl::StatusOr<bool> RunCompare(const CliOptions& options, std::ostream& out);

}  // namespace mrope

#endif  // MROPE_CLI_EXPLAIN_COMMAND_H_
