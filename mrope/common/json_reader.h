#ifndef MROPE_COMMON_JSON_READER_H_
#define MROPE_COMMON_JSON_READER_H_

// mrope's one JSON reader (requests, golden cases, config.json): simdjson's On-Demand parser,
// read front to back straight into the caller's types, with bounds and path-naming errors.
//
//   absl::Status status = ReadJson(text, [&](JsonValue& root) {
//     return root.ForEachField([&](absl::string_view key, JsonValue& value) -> absl::Status {
//       if (key == "ids") return ReadInt64List(value, 0, 99, ids);
//       return value.UnknownKey(key, {"ids"});
//     });
//   });
//
// Bounds: documents are at most kMaxJsonBytes; containers nest at most kMaxJsonDepth deep (the
// refusal names the depth); nothing is allocated in proportion to a size the document declares.
// Errors are InvalidArgument and start with the value's path, e.g.
// "inputs.input_ids[0][17]: expected an integer in [0, 4611686018427387904], got -5".
// Values are parsed only when read: the content of a skipped value is checked for structure and
// depth, not for number syntax.

#include <cstdint>
#include <limits>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace mrope {

// Upper bound on JSON text mrope reads; larger documents are refused before parsing.
// 64 MiB holds ~9M token ids; larger batches should use binary protos.
inline constexpr int64_t kMaxJsonBytes = int64_t{64} << 20;

// Deepest nesting of arrays and objects accepted (mrope's formats need at most 5).
inline constexpr int kMaxJsonDepth = 64;

// Reads a whole file ("-" reads stdin), refusing more than kMaxJsonBytes. The string has spare
// capacity for the parser's padding, so ReadJson reads it without a copy.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// One value of a document being read. Each value can be read once, in document order: read it
// with one of the methods below, or Skip() it (a value a callback leaves unread is skipped
// without the depth check). Errors from any method name this value's path.
class JsonValue {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  JsonValue(const JsonValue&) = delete;
  JsonValue& operator=(const JsonValue&) = delete;

  absl::StatusOr<Kind> kind();
  // True (and the value consumed) when the value is null.
  absl::StatusOr<bool> IsNull();

  // Calls `field` for each key of an object, in document order; `value` must be read or skipped
  // there. Stops at the first error.
  absl::Status ForEachField(
      absl::FunctionRef<absl::Status(absl::string_view key, JsonValue& value)> field);
  // Calls `item` for each element of an array with its index.
  absl::Status ForEachItem(absl::FunctionRef<absl::Status(int64_t index, JsonValue& item)> item);

  // An integral number in [min, max]: a JSON integer, an integral float such as 2.0, or (proto3
  // JSON) a string holding an integer.
  absl::StatusOr<int64_t> Int64(int64_t min = std::numeric_limits<int64_t>::min(),
                                int64_t max = std::numeric_limits<int64_t>::max());
  // A finite number.
  absl::StatusOr<double> Double();
  absl::StatusOr<bool> Bool();
  absl::StatusOr<std::string> String();
  // Reads past the value, checking its nesting depth.
  absl::Status Skip();

  // "inputs.input_ids[0][17]" ("" for the root).
  std::string Path() const;
  // InvalidArgument "<path>: <message>".
  absl::Status Error(absl::string_view message) const;
  // Called on the value of an unexpected key: the error names the object, the key and the
  // accepted keys.
  absl::Status UnknownKey(absl::string_view key,
                          absl::Span<const absl::string_view> accepted) const;

 private:
  friend struct JsonValueAccess;  // json_reader.cc makes the root value
  struct PathPart {
    absl::string_view key;  // an object's key, valid until the document is closed
    int64_t index = 0;      // an array's index
    bool is_index = false;
  };
  class Context;
  JsonValue(Context* context, const void* value, int depth);
  absl::Status CheckNesting() const;  // this value may be an array or object
  absl::Status SyntaxError(int code);
  // A failed read of this value as `what`: a type error, or else a syntax error.
  absl::Status AccessError(int code, absl::string_view what);
  absl::Status ExpectedError(absl::string_view what);

  Context* context_;
  int depth_;  // 1 for the root; path_[depth_ - 2] names this value
  alignas(8) unsigned char storage_[32];  // a simdjson::ondemand::value
};

// Parses `text` and calls `read` on its root, which must be an object or an array. Fails if
// `read` fails, if the text is malformed or too deep, or if anything follows the root value.
// The std::string overload reads in place when the string has the spare capacity that
// ReadFileToString leaves; the string_view overload copies the text once.
absl::Status ReadJson(const std::string& text, absl::FunctionRef<absl::Status(JsonValue&)> read);
absl::Status ReadJson(absl::string_view text, absl::FunctionRef<absl::Status(JsonValue&)> read);
inline absl::Status ReadJson(const char* text, absl::FunctionRef<absl::Status(JsonValue&)> read) {
  return ReadJson(absl::string_view(text), read);
}

// A flat array of integers in [min, max], each passed to `add` in order; more than `max_items`
// is refused at the first extra item, so the caller's storage never grows past the bound.
template <typename Add>
absl::Status ReadInt64List(JsonValue& value, int64_t min, int64_t max, int64_t max_items,
                           Add&& add) {
  return value.ForEachItem([&](int64_t index, JsonValue& item) -> absl::Status {
    if (index >= max_items) return value.Error(absl::StrCat("more than ", max_items, " items"));
    absl::StatusOr<int64_t> x = item.Int64(min, max);
    if (!x.ok()) return x.status();
    add(*x);
    return absl::OkStatus();
  });
}

}  // namespace mrope

#endif  // MROPE_COMMON_JSON_READER_H_
