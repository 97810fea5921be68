#ifndef MROPE_CLI_OUTPUT_H_
#define MROPE_CLI_OUTPUT_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace mrope {

// Writes `content` to the file `path` (binary), or to `out` when `path` is empty.
absl::Status WriteOutput(const std::string& path, absl::string_view content, std::ostream& out);

}  // namespace mrope

#endif  // MROPE_CLI_OUTPUT_H_
