#include "mrope/cli/explain_command.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mrope/cli/output.h"
#include "mrope/common/status_macros.h"
#include "mrope/service/explain.h"
#include "mrope/service/position_service.h"
#include "mrope/service/proto_convert.h"

namespace mrope {

absl::Status RunExplain(const CliOptions& options, std::ostream& out) {
  if (!options.format.empty()) {
    return absl::InvalidArgumentError("explain prints a table; drop --format");
  }
  ModelSpec spec;
  Prompt prompt;
  if (!options.golden.empty()) {
    MROPE_ASSIGN_OR_RETURN(GoldenInput input, LoadGoldenInput(options));
    spec = std::move(input.model);
    MROPE_ASSIGN_OR_RETURN(prompt, PromptFromProto(input.request));
  } else {
    MROPE_ASSIGN_OR_RETURN(spec, LoadCliModel(options));
    MROPE_ASSIGN_OR_RETURN(const PositionRequest request, LoadCliRequest(options));
    MROPE_ASSIGN_OR_RETURN(prompt, PromptFromProto(request));
  }
  MROPE_ASSIGN_OR_RETURN(const PositionService service, PositionService::Create(std::move(spec)));
  MROPE_ASSIGN_OR_RETURN(const BatchPlan plan, service.Plan(prompt));
  MROPE_ASSIGN_OR_RETURN(const std::string table, ExplainPlan(service.spec().positions, plan));
  return WriteOutput(options.output, table, out);
}

}  // namespace mrope
