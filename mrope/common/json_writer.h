#ifndef MROPE_COMMON_JSON_WRITER_H_
#define MROPE_COMMON_JSON_WRITER_H_

// Writing numeric JSON compactly: integers as integers, float32 values as the shortest decimal
// that reads back to the same float32 (integral floats as "12.0", like Python), nested arrays
// from a flat row-major buffer and a shape.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace mrope {

void AppendJsonNumber(int64_t value, std::string& out);
void AppendJsonNumber(int32_t value, std::string& out);
void AppendJsonNumber(float value, std::string& out);

// Appends `values` (row-major) as nested arrays of `shape`; the product of shape must equal
// values.size().
template <typename T>
void AppendJsonArray(absl::Span<const T> values, absl::Span<const int64_t> shape,
                     std::string& out);

// Appends `"key":` (the key is emitted verbatim; callers pass plain identifiers).
void AppendJsonKey(absl::string_view key, std::string& out);

}  // namespace mrope

#endif  // MROPE_COMMON_JSON_WRITER_H_
