#ifndef MROPE_CLI_TABLES_COMMAND_H_
#define MROPE_CLI_TABLES_COMMAND_H_

#include <ostream>

#include "absl/status/status.h"
#include "cli/cli_options.h"

namespace mrope {

// `mrope tables --config=X [--positions=0,17,12:3:4] [--seq_len=N] [--format=text|json]`: the
// model's rotary parameters, inv_freq and axis of every rotary pair, and cos/sin of every pair
// at the chosen positions (T means (T, T, T); T:H:W sets the three axes), to --output or `out`.
// --seq_len sets the length dynamic NTK / LongRoPE frequencies use (default: max position + 1).
absl::Status RunTables(const CliOptions& options, std::ostream& out);

}  // namespace mrope

#endif  // MROPE_CLI_TABLES_COMMAND_H_
