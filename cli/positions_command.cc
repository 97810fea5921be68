#include "cli/positions_command.h"

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/output.h"
#include "mrope/common/status_macros.h"
#include "mrope/service/position_service.h"
#include "mrope/service/response_json.h"
#include "mrope/service/textproto.h"

namespace mrope {
namespace {

// A golden case is a model and a request; its `outputs` are what HF's generate() sees at
// prefill and for 3 decode steps, so those are returned unless the case asks otherwise.
constexpr int64_t kGoldenDecodeSteps = 3;

// --cp_size / --cp_rank into the request's options.
absl::Status ApplyContextParallel(const CliOptions& options, v1::PositionRequest& request) {
  if (options.cp_size == 0) {
    if (options.cp_rank != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--cp_rank=", options.cp_rank, " needs --cp_size"));
    }
    return absl::OkStatus();
  }
  request.mutable_options()->set_cp_size(options.cp_size);
  request.mutable_options()->set_cp_rank(options.cp_rank);
  return absl::OkStatus();
}

absl::Status RunGolden(const CliOptions& options, std::ostream& out) {
  if (!options.format.empty() && options.format != "json") {
    return absl::InvalidArgumentError("--golden prints JSON; drop --format");
  }
  MROPE_ASSIGN_OR_RETURN(GoldenInput input, LoadGoldenInput(options));
  MROPE_RETURN_IF_ERROR(ApplyContextParallel(options, input.request));
  if (input.request.options().decode_steps() == 0) {
    input.request.mutable_options()->set_decode_steps(kGoldenDecodeSteps);
  }
  MROPE_ASSIGN_OR_RETURN(const PositionService service,
                         PositionService::Create(std::move(input.model)));
  MROPE_ASSIGN_OR_RETURN(const v1::PositionResponse response, service.Handle(input.request));
  return WriteOutput(options.output, absl::StrCat(PositionResponseToJson(response), "\n"), out);
}

template <typename T>
std::string RawBytes(const google::protobuf::RepeatedField<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

}  // namespace

absl::Status RunPositions(const CliOptions& options, std::ostream& out) {
  if (!options.golden.empty()) return RunGolden(options, out);
  const std::string format = options.format.empty() ? "json" : options.format;
  if (format != "json" && format != "textproto" && format != "int32" && format != "int64") {
    return absl::InvalidArgumentError(
        absl::StrCat("--format must be json, textproto, int32 or int64, got '", format, "'"));
  }
  const bool raw = format == "int32" || format == "int64";
  if (raw && options.output.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--format=", format, " writes binary: give --output=FILE"));
  }
  MROPE_ASSIGN_OR_RETURN(ModelSpec spec, LoadCliModel(options));
  MROPE_ASSIGN_OR_RETURN(const PositionService service, PositionService::Create(std::move(spec)));
  MROPE_ASSIGN_OR_RETURN(v1::PositionRequest request, LoadCliRequest(options));
  MROPE_RETURN_IF_ERROR(ApplyContextParallel(options, request));
  if (raw) {
    request.mutable_options()->set_output_type(format == "int32" ? v1::PositionOptions::INT32
                                                                 : v1::PositionOptions::INT64);
  }
  MROPE_ASSIGN_OR_RETURN(const v1::PositionResponse response, service.Handle(request));
  if (format == "int32") {
    return WriteOutput(options.output, RawBytes(response.position_ids().int32_values()), out);
  }
  if (format == "int64") {
    return WriteOutput(options.output, RawBytes(response.position_ids().int64_values()), out);
  }
  if (format == "textproto") return WriteOutput(options.output, ToTextproto(response), out);
  return WriteOutput(options.output, absl::StrCat(PositionResponseToJson(response), "\n"), out);
}

}  // namespace mrope
