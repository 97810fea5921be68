#ifndef MROPE_CLI_CLI_OPTIONS_H_
#define MROPE_CLI_CLI_OPTIONS_H_

// The `mrope` command line as plain data (main.cc fills it from absl flags), and the loading
// every command shares: the model (--config plus overrides) and the prompt (--request or
// --golden).

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "mrope/positions/model_config.h"
#include "mrope/service/model_spec.h"
#include "proto/mrope.pb.h"

namespace mrope {

struct CliOptions {
  std::string config;   // preset name or config file
  std::string request;  // request file (JSON or textproto), "-" for stdin
  std::string golden;   // golden case file (model, config and inputs in one)
  std::string format;   // per command; empty: the command's default
  std::string output;   // file for the result; empty: stdout
  std::string positions = "0";  // tables: comma-separated T or T:H:W
  int64_t seq_len = 0;  // tables: sequence length for dynamic / LongRoPE (0: max position + 1)
  std::string video_time_rounding;  // override: scale_then_truncate | truncate_interval_first
  // override: a release ("transformers==5.23.0") or a convention's name or alias
  // (ResolveConvention, mrope/model/conventions.h)
  std::string convention;
  std::string compare;              // explain: conventions to compare, "hf_v4,hf_v5_2,vllm"
  // positions: rank cp_rank of cp_size's context-parallel slice (the request's
  // options.cp_size / cp_rank); 0: as the request says.
  int32_t cp_size = 0;
  int32_t cp_rank = 0;
  // A model with a rotary per layer type: the type whose rotary to use (ModelSpecForLayerType).
  std::string layer_type;
};

// The model of --config with the --video_time_rounding / --convention overrides applied, and
// --layer_type's rotary.
absl::StatusOr<ModelSpec> LoadCliModel(const CliOptions& options);

// --golden: the case's model (mrope/service/case_model.h) and the case file read as a request.
// --config and --request must be empty.
struct GoldenInput {
  ModelSpec model;
  v1::PositionRequest request;
};
absl::StatusOr<GoldenInput> LoadGoldenInput(const CliOptions& options);

// --request, parsed.
absl::StatusOr<v1::PositionRequest> LoadCliRequest(const CliOptions& options);

}  // namespace mrope

#endif  // MROPE_CLI_CLI_OPTIONS_H_
