#ifndef MROPE_CLI_CONVENTIONS_COMMAND_H_
#define MROPE_CLI_CONVENTIONS_COMMAND_H_

#include <ostream>

#include "absl/status/status.h"
#include "cli/cli_options.h"

namespace mrope {

// `mrope conventions [--format=text|json|markdown]`: every convention per family (the table of
// mrope/model/conventions.h) with its aliases, reference, the release range it reproduces and
// how that was verified, to --output or `out`.
absl::Status RunConventions(const CliOptions& options, std::ostream& out);

}  // namespace mrope

#endif  // MROPE_CLI_CONVENTIONS_COMMAND_H_
