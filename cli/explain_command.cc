#include "cli/explain_command.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/output.h"
#include "mrope/common/status_macros.h"
#include "mrope/service/compare.h"
#include "mrope/service/explain.h"
#include "mrope/service/position_service.h"
#include "mrope/service/proto_convert.h"

namespace mrope {

namespace {

// The model and prompt of --golden, or of --config and --request.
absl::Status LoadExplainInput(const CliOptions& options, ModelSpec& spec, Prompt& prompt) {
  if (!options.format.empty()) {
    return absl::InvalidArgumentError("explain prints a table; drop --format");
  }
  if (!options.golden.empty()) {
    MROPE_ASSIGN_OR_RETURN(GoldenInput input, LoadGoldenInput(options));
    spec = std::move(input.model);
    MROPE_ASSIGN_OR_RETURN(prompt, PromptFromProto(input.request));
    return absl::OkStatus();
  }
  MROPE_ASSIGN_OR_RETURN(spec, LoadCliModel(options));
  MROPE_ASSIGN_OR_RETURN(const v1::PositionRequest request, LoadCliRequest(options));
  MROPE_ASSIGN_OR_RETURN(prompt, PromptFromProto(request));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> RunCompare(const CliOptions& options, std::ostream& out) {
  ModelSpec spec;
  Prompt prompt;
  MROPE_RETURN_IF_ERROR(LoadExplainInput(options, spec, prompt));
  MROPE_ASSIGN_OR_RETURN(const std::vector<Convention> conventions,
                         ParseConventionList(options.compare));
  MROPE_ASSIGN_OR_RETURN(const ConventionComparison comparison,
                         CompareConventions(spec, prompt, conventions));
  MROPE_RETURN_IF_ERROR(WriteOutput(options.output, comparison.report, out));
  return comparison.agree;
}

absl::Status RunExplain(const CliOptions& options, std::ostream& out) {
  ModelSpec spec;
  Prompt prompt;
  MROPE_RETURN_IF_ERROR(LoadExplainInput(options, spec, prompt));
  MROPE_ASSIGN_OR_RETURN(const PositionService service, PositionService::Create(std::move(spec)));
  MROPE_ASSIGN_OR_RETURN(const BatchPlan plan, service.Plan(prompt));
  MROPE_ASSIGN_OR_RETURN(const std::string table, ExplainPlan(service.spec().positions, plan));
  return WriteOutput(options.output, table, out);
}

}  // namespace mrope
