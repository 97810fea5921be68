// The `mrope` command-line tool: M-RoPE positions of multimodal prompts for Qwen VL / Omni
// and GLM-4.1V / GLM-4.5V models. `mrope --help` explains the commands; each is a function in this directory.

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/cli_options.h"
#include "cli/conventions_command.h"
#include "cli/explain_command.h"
#include "cli/positions_command.h"
#include "cli/rotary_command.h"
#include "cli/tables_command.h"
#include "mrope/model/model_family.h"

ABSL_FLAG(std::string, config, "",
          "The model: a preset (listed under `presets` above), the model's HF config.json or "
          "checkpoint directory, or a ModelParams .textproto.");
ABSL_FLAG(std::string, request, "",
          "The prompt: a PositionRequest as JSON or textproto (see proto/mrope.proto), or - for "
          "stdin. JSON may use the golden layout: input_ids [[...]], image_grid_thw [[t,h,w]].");
ABSL_FLAG(std::string, golden, "",
          "A golden case file (tests/golden): model, config and inputs in one. Replaces "
          "--config and --request.");
ABSL_FLAG(std::string, format, "",
          "positions: json (default), textproto, int32 or int64 (raw position_ids, needs "
          "--output). tables: text (default) or json. conventions: text (default), json or "
          "markdown (README's table).");
ABSL_FLAG(std::string, output, "", "Write the result to this file instead of stdout.");
ABSL_FLAG(std::string, positions, "0",
          "tables: comma-separated positions, T for (T, T, T) or T:H:W.");
ABSL_FLAG(int64_t, seq_len, 0,
          "tables: sequence length for dynamic NTK / LongRoPE frequencies (0: max position + 1).");
ABSL_FLAG(std::string, video_time_rounding, "",
          "Override the Qwen2.5-VL video time index: scale_then_truncate (vLLM, SGLang, "
          "TensorRT-LLM; the default) or truncate_interval_first (HF transformers v4).");
ABSL_FLAG(std::string, compare, "",
          "explain: conventions to compare side by side, e.g. hf_v4,hf_v5_2,vllm (exit status "
          "3 when they disagree).");
ABSL_FLAG(std::string, convention, "",
          "Override the convention (whose padding, deltas and decode to follow): a release, "
          "e.g. transformers==5.23.0 or vllm==0.33.0 (the convention reproducing it, with its "
          "video time rounding), or a convention by name or alias (hf_v4 or hf, hf_v5_2, hf_v5, "
          "hf_v5_18, vllm); `mrope conventions` lists them with the releases they reproduce.");

ABSL_FLAG(int32_t, cp_size, 0,
          "positions: context parallelism over N ranks (Megatron-LM / TransformerEngine "
          "chunks): only --cp_rank's slice, its token indices (cp_token_index) and cu_seqlens. "
          "Every row's padded length (the batch's row length; PACKED: the row's own) must be a "
          "multiple of 2 * N. 0: as the request says.");
ABSL_FLAG(int32_t, cp_rank, 0, "positions: the context-parallel rank, in [0, --cp_size).");
ABSL_FLAG(std::string, layer_type, "",
          "A model whose rotary is per attention layer type (cohere_compass): the layer type "
          "whose rotary tables and cos_sin use, e.g. sliding_attention (a NoPE type has none).");

namespace {

constexpr char kUsage[] = R"(M-RoPE positions of multimodal prompts for Qwen VL / Omni / 3.5, GLM-4.1V / 4.5V / 4.6V / OCR / Image, PaddleOCR-VL and ERNIE-4.5-VL models.

usage: mrope <command> [flags]

commands:
  positions  Position ids [3][B][L] and per-row deltas of a prompt.
               mrope positions --golden=tests/golden/qwen2_vl/case_001.json
               mrope positions --config=qwen2_5_vl --request=request.json
               mrope positions --config=Qwen2.5-VL-7B-Instruct/config.json --request=- < req.textproto
               mrope positions --config=qwen3_vl --request=req.json --format=int32 --output=pos.bin
               mrope positions --config=qwen2_5_vl --request=req.json --cp_size=4 --cp_rank=1
             A request holds the prompt as HF processors give it (inputs: input_ids,
             attention_mask, image_grid_thw, video_grid_thw, second_per_grid_ts,
             video_second_per_grid, audio_feature_lengths, use_audio_in_video,
             mm_token_type_ids, images_per_sample) or as explicit
             spans (sequences), plus options: output_type, layout (PADDED | PACKED),
             window_begin/window_end, decode_steps, cos_sin, cp_size/cp_rank. Minimal JSON
             request:
               {"inputs": {"input_ids": [[151652, 151655, 151655, 151655, 151655, 151653, 42]],
                           "image_grid_thw": [[1, 4, 4]]}}
  explain    A table of the prompt's spans: kind, token range, grid, seconds per grid, the
             t/h/w position ranges, where the next token continues (and where the other
             conventions would continue when they differ). Look here first when a VL model
             misreads an image or a video.
               mrope explain --config=qwen2_5_vl --request=request.json
               mrope explain --golden=tests/golden/qwen2_5_vl/case_026.json
             With --compare=hf_v4,hf_v5_2,vllm: the prompt under each convention side by side
             (deltas, first decode positions, the first diverging token, the rules that
             differ); exit status 0 when they agree, 3 when they do not.
               mrope explain --compare=hf_v4,vllm --golden=tests/golden/qwen2_5_vl/case_026.json
  tables     inv_freq, the axis (t/h/w) of every rotary pair, and cos/sin at chosen positions.
               mrope tables --config=qwen3_vl --positions=0,100,12:3:4
  rotary     Runs the rotary math on a rotary golden case and prints cos, sin, q_rot, k_rot.
               mrope rotary --golden=tests/golden/rotary_qwen3_vl/case_001.json
  conventions  Every convention per family: its name by the first release it reproduces,
             aliases, reference, release range and how it was verified (--format=json).
               mrope conventions --format=json

Errors go to stderr with a non-zero exit status.
)";

// kUsage plus the presets of the family table.
std::string Usage() {
  return absl::StrCat(kUsage, "\npresets (--config):\n  ",
                      absl::StrJoin(mrope::PresetNames(), ", "), "\n");
}

// `explain --compare`'s exit status when the conventions give different positions (errors
// exit 1, usage errors 2).
constexpr int kConventionsDisagree = 3;

int Fail(const absl::Status& status) {
  std::cerr << "mrope: " << status.message() << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Under `bazel run`, resolve relative paths against the directory the command was run from.
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY"); dir != nullptr) {
    if (chdir(dir) != 0) {
      std::cerr << "mrope: cannot change to BUILD_WORKING_DIRECTORY " << dir << "\n";
      return 1;
    }
  }
  absl::FlagsUsageConfig usage_config;
  // --help lists the flags of this tool (all defined here), not absl's own.
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "cli/");
  };
  usage_config.contains_helpshort_flags = usage_config.contains_help_flags;
  absl::SetFlagsUsageConfig(usage_config);
  const std::string usage = Usage();
  absl::SetProgramUsageMessage(usage);
  const std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 2) {
    std::cerr << usage << "\nmrope: expected exactly one command, got " << args.size() - 1
              << " (see mrope --help)\n";
    return 2;
  }
  const std::string command = args[1];
  mrope::CliOptions options;
  options.config = absl::GetFlag(FLAGS_config);
  options.request = absl::GetFlag(FLAGS_request);
  options.golden = absl::GetFlag(FLAGS_golden);
  options.format = absl::GetFlag(FLAGS_format);
  options.output = absl::GetFlag(FLAGS_output);
  options.positions = absl::GetFlag(FLAGS_positions);
  options.seq_len = absl::GetFlag(FLAGS_seq_len);
  options.video_time_rounding = absl::GetFlag(FLAGS_video_time_rounding);
  options.convention = absl::GetFlag(FLAGS_convention);
  options.compare = absl::GetFlag(FLAGS_compare);
  options.cp_size = absl::GetFlag(FLAGS_cp_size);
  options.cp_rank = absl::GetFlag(FLAGS_cp_rank);
  options.layer_type = absl::GetFlag(FLAGS_layer_type);

  absl::Status status;
  if (command == "positions") {
    status = mrope::RunPositions(options, std::cout);
  } else if (command == "explain" && !options.compare.empty()) {
    const absl::StatusOr<bool> agree = mrope::RunCompare(options, std::cout);
    if (!agree.ok()) return Fail(agree.status());
    return *agree ? 0 : kConventionsDisagree;
  } else if (command == "explain") {
    status = mrope::RunExplain(options, std::cout);
  } else if (command == "conventions") {
    status = mrope::RunConventions(options, std::cout);
  } else if (command == "tables") {
    status = mrope::RunTables(options, std::cout);
  } else if (command == "rotary") {
    if (options.golden.empty()) {
      return Fail(absl::InvalidArgumentError("rotary needs --golden=CASE.json"));
    }
    status = mrope::RunRotaryGolden(options.golden, std::cout);
  } else {
    std::cerr << "mrope: unknown command '" << command
              << "'; commands: positions, explain, tables, rotary, conventions (see mrope --help)\n";
    return 2;
  }
  if (!status.ok()) return Fail(status);
  return 0;
}
