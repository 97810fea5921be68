#include "cli/output.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace mrope {

absl::Status WriteOutput(const std::string& path, absl::string_view content, std::ostream& out) {
  if (path.empty()) {
    out.write(content.data(), content.size());
    return out.good() ? absl::OkStatus() : absl::UnavailableError("writing to stdout failed");
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(content.data(), content.size());
  file.close();
  if (!file) {
    return absl::PermissionDeniedError(
        absl::StrCat("--output ", path, ": cannot write: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace mrope
