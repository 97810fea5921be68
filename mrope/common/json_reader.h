#ifndef MROPE_COMMON_JSON_READER_H_
#define MROPE_COMMON_JSON_READER_H_

// mrope's one JSON reader (requests, golden cases, config.json): a pull reader that walks the
// text front to back, straight into the caller's types, with bounds and path-naming errors.
// It keeps no index: memory is the text plus what the caller builds. Scalars (numbers, strings)
// and skipped values are parsed by rapidjson's Reader (Debian rapidjson-dev 1.1.0, which has
// no pull API; doubles are then converted from their text by Abseil's exact from_chars); the
// containers the caller walks into are read here, so depth and paths are tracked without
// recursion in the parser.
//
//   absl::Status status = ReadJson(text, [&](JsonValue& root) {
//     return root.ForEachField([&](absl::string_view key, JsonValue& value) -> absl::Status {
//       if (key == "ids") return ReadInt64List(value, 0, 99, ids);
//       return value.UnknownKey(key, {"ids"});
//     });
//   });
//
// Bounds: documents are at most kMaxJsonBytes; containers nest at most kMaxJsonDepth deep, in
// skipped values too (the refusal names the depth); nothing is allocated in proportion to a
// size the document declares. Errors are InvalidArgument and start with the value's path, e.g.
// "inputs.input_ids[0][17]: expected an integer in [0, 4611686018427387904], got -5".
// Skipped values are checked in full (RFC 8259 grammar, UTF-8 strings, depth). Text holding a
// NUL byte is refused.

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

// Reads a whole file ("-" reads stdin), refusing more than kMaxJsonBytes.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// One value of a document being read. Each value can be read once, in document order: read it
// with one of the methods below, or Skip() it (a value a callback leaves unread is skipped).
// kind() and a false IsNull() do not read it. Reading a value twice is a FailedPrecondition.
// Errors from any method name this value's path.
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

  // An integral number in [min, max]: a JSON integer, an integral float such as 2.0 or 1e3
  // (below 2^53 in magnitude), or (proto3 JSON) a string holding an integer.
  absl::StatusOr<int64_t> Int64(int64_t min = std::numeric_limits<int64_t>::min(),
                                int64_t max = std::numeric_limits<int64_t>::max());
  // A finite number, the double nearest its text. Numbers past the double range are refused
  // (rapidjson 1.1.0 judges the exponent before the mantissa, so even 0e400 is refused).
  absl::StatusOr<double> Double();
  absl::StatusOr<bool> Bool();
  absl::StatusOr<std::string> String();
  // Reads past the value, checking its syntax and nesting depth.
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
  class Context;
  JsonValue(Context* context, int depth);
  // OK when the value has not been read yet.
  absl::Status CheckUnread() const;
  // Reads the opening bracket of a container of `what` (an array or an object).
  absl::Status Open(Kind container, absl::string_view what);
  // After a callback: skips the value if it left it unread.
  absl::Status SkipIfUnread();
  // After a member of this container (a field's value or an item): reads ',' (false: another
  // member follows) or `close` (true: the container ends); `text_ends` and `unexpected` are
  // the messages for the end of the text and for anything else.
  absl::StatusOr<bool> EndOfMember(char close, absl::string_view text_ends,
                                   absl::string_view unexpected) const;
  absl::Status ExpectedError(absl::string_view what);
  // The value's text for messages, shortened; `parsed`: the read position is at its end, else
  // (a number the parser stopped inside) up to the first character no number holds.
  std::string ShownText(bool parsed) const;
  // "malformed JSON at byte N: <message>" for this value's path.
  absl::Status SyntaxError(absl::string_view message) const;

  Context* context_;
  int depth_;           // 1 for the root
  int64_t offset_ = 0;  // where the value starts in the text
};

// Parses `text` and calls `read` on its root, which must be an object or an array. Fails if
// `read` fails, if the text is malformed or too deep, or if anything follows the root value.
// The text is read in place, without a copy.
absl::Status ReadJson(absl::string_view text, absl::FunctionRef<absl::Status(JsonValue&)> read);

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
