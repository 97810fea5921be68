#include "mrope/common/json_writer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace mrope {
namespace {

template <typename T>
void AppendNested(absl::Span<const T> values, absl::Span<const int64_t> shape, size_t& at,
                  std::string& out) {
  out.push_back('[');
  for (int64_t i = 0; i < shape[0]; ++i) {
    if (i > 0) out.push_back(',');
    if (shape.size() == 1) {
      AppendJsonNumber(values[at++], out);
    } else {
      AppendNested(values, shape.subspan(1), at, out);
    }
  }
  out.push_back(']');
}

}  // namespace

void AppendJsonNumber(int64_t value, std::string& out) { absl::StrAppend(&out, value); }
void AppendJsonNumber(int32_t value, std::string& out) { absl::StrAppend(&out, value); }

void AppendJsonNumber(float value, std::string& out) {
  if (!std::isfinite(value)) {
    out += "null";  // JSON has no NaN or infinity
    return;
  }
  char buffer[32];
  if (value == std::trunc(value) && std::fabs(value) < 1e16f) {
    std::snprintf(buffer, sizeof(buffer), "%.1f", static_cast<double>(value));
    out += buffer;
    return;
  }
  for (int precision = 6; precision <= 9; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, static_cast<double>(value));
    if (std::strtof(buffer, nullptr) == value) break;
  }
  out += buffer;
}

template <typename T>
void AppendJsonArray(absl::Span<const T> values, absl::Span<const int64_t> shape,
                     std::string& out) {
  size_t at = 0;
  if (shape.empty()) {
    out += "[]";
    return;
  }
  AppendNested(values, shape, at, out);
}

template void AppendJsonArray<int64_t>(absl::Span<const int64_t>, absl::Span<const int64_t>,
                                       std::string&);
template void AppendJsonArray<int32_t>(absl::Span<const int32_t>, absl::Span<const int64_t>,
                                       std::string&);
template void AppendJsonArray<float>(absl::Span<const float>, absl::Span<const int64_t>,
                                     std::string&);

void AppendJsonKey(absl::string_view key, std::string& out) {
  absl::StrAppend(&out, "\"", key, "\":");
}

}  // namespace mrope
