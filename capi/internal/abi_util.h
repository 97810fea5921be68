#ifndef MROPE_CAPI_INTERNAL_ABI_UTIL_H_
#define MROPE_CAPI_INTERNAL_ABI_UTIL_H_

// Helpers behind the C ABI (capi/include/mrope/mrope_c.h): status codes and messages, the
// struct_size rule, and the guard that keeps C++ exceptions from crossing into C.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "mrope/mrope_c.h"

namespace mrope {
namespace capi {

// Writes `status`'s message (NUL-terminated, truncated to fit; "" when OK) into the caller's
// buffer, if any, and returns its code.
int Report(const absl::Status& status, char* message, size_t message_size);

// Runs `body` (returning absl::Status) and reports its result; an exception (allocation
// failure) becomes RESOURCE_EXHAUSTED / INTERNAL instead of unwinding into C.
template <typename Body>
int Guarded(char* message, size_t message_size, Body&& body) {
  absl::Status status;
  try {
    status = body();
  } catch (const std::bad_alloc&) {
    status = absl::ResourceExhaustedError("mrope: out of memory");
  } catch (...) {
    status = absl::InternalError("mrope: unexpected C++ exception");
  }
  return Report(status, message, message_size);
}

absl::Status NullArgument(const char* name);

// The struct_size rule for a struct the caller passes in: at least the first version's size;
// bytes past sizeof(T) (fields of a newer header) must be zero. Returns a copy holding the
// caller's fields (fields the caller's older header lacks would read as zero).
template <typename T>
absl::StatusOr<T> ReadVersioned(const T* in, const char* name, size_t first_version_size) {
  if (in == nullptr) return NullArgument(name);
  const size_t size = in->struct_size;
  if (size < first_version_size) {
    return absl::InvalidArgumentError(absl::StrCat(name, "->struct_size is ", size,
                                                   ", expected sizeof(", name, ") = ", sizeof(T)));
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(in);
  for (size_t i = sizeof(T); i < size; ++i) {
    if (bytes[i] != 0) {
      return absl::UnimplementedError(
          absl::StrCat(name, " sets fields this library (C API version ", MROPE_C_API_VERSION,
                       ") does not know: byte ", i, " of its ", size, " is not zero"));
    }
  }
  T copy;
  std::memset(&copy, 0, sizeof(T));
  std::memcpy(&copy, in, size < sizeof(T) ? size : sizeof(T));
  return copy;
}

// The struct_size rule for a struct the library fills: writes min(struct_size, sizeof(T))
// bytes of `value` (struct_size kept), after checking the first version's size.
template <typename T>
absl::Status WriteVersioned(const T& value, T* out, const char* name, size_t first_version_size) {
  if (out == nullptr) return NullArgument(name);
  const uint32_t size = out->struct_size;
  if (size < first_version_size) {
    return absl::InvalidArgumentError(absl::StrCat(name, "->struct_size is ", size,
                                                   ", expected sizeof(", name, ") = ", sizeof(T)));
  }
  std::memcpy(out, &value, size < sizeof(T) ? size : sizeof(T));
  out->struct_size = size;
  return absl::OkStatus();
}

}  // namespace capi
}  // namespace mrope

#endif  // MROPE_CAPI_INTERNAL_ABI_UTIL_H_
