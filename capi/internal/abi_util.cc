#include "capi/internal/abi_util.h"

#include <algorithm>

namespace mrope {
namespace capi {

int Report(const absl::Status& status, char* message, size_t message_size) {
  if (message != nullptr && message_size > 0) {
    const absl::string_view text = status.message();
    const size_t length = std::min(text.size(), message_size - 1);
    if (length > 0) std::memcpy(message, text.data(), length);  // an OK status's data is null
    message[length] = '\0';
  }
  return static_cast<int>(status.code());
}

absl::Status NullArgument(const char* name) {
  return absl::InvalidArgumentError(absl::StrCat(name, " is NULL"));
}

}  // namespace capi
}  // namespace mrope
