#include "mrope/common/json_reader.h"

#include <array>
#include <cmath>
#include <fstream>
#include <iostream>
#include <iterator>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mrope/common/status_macros.h"
#include "simdjson.h"

namespace mrope {

namespace ondemand = ::simdjson::ondemand;

// The state shared by the values of one document: the path of the value being read and where
// the text starts (for byte offsets in syntax errors).
class JsonValue::Context {
 public:
  Context(ondemand::document& doc, const char* text) : doc_(doc), text_(text) {}

  PathPart& part(int depth) { return path_[depth - 1]; }

  std::string Path(int depth) const {
    std::string out;
    for (int i = 0; i + 1 < depth; ++i) {
      if (path_[i].is_index) {
        absl::StrAppend(&out, "[", path_[i].index, "]");
      } else {
        absl::StrAppend(&out, out.empty() ? "" : ".", path_[i].key);
      }
    }
    return out;
  }

  // " at byte N", or "" when the parser cannot say.
  std::string Location() {
    const char* at = nullptr;
    if (doc_.current_location().get(at) != simdjson::SUCCESS) return "";
    return absl::StrCat(" at byte ", at - text_);
  }

 private:
  ondemand::document& doc_;
  const char* text_;
  std::array<PathPart, kMaxJsonDepth + 1> path_;
};

// Parses a document and reads its root (ReadJson's body; a friend of JsonValue).
struct JsonValueAccess {
  static absl::Status Read(simdjson::padded_string_view text,
                           absl::FunctionRef<absl::Status(JsonValue&)> read);
};

namespace {

ondemand::value& Get(unsigned char* storage) {
  return *std::launder(reinterpret_cast<ondemand::value*>(storage));
}

JsonValue::Kind ToKind(ondemand::json_type type) {
  switch (type) {
    case ondemand::json_type::array:
      return JsonValue::Kind::kArray;
    case ondemand::json_type::object:
      return JsonValue::Kind::kObject;
    case ondemand::json_type::number:
      return JsonValue::Kind::kNumber;
    case ondemand::json_type::string:
      return JsonValue::Kind::kString;
    case ondemand::json_type::boolean:
      return JsonValue::Kind::kBool;
    case ondemand::json_type::null:
      break;
  }
  return JsonValue::Kind::kNull;
}

absl::string_view KindName(JsonValue::Kind kind) {
  // In the order of JsonValue::Kind.
  constexpr absl::string_view kNames[] = {"null",     "a bool",   "a number",
                                          "a string", "an array", "an object"};
  return kNames[static_cast<int>(kind)];
}

// The value's text for messages, shortened.
std::string RawText(ondemand::value& value) {
  const std::string_view raw = value.raw_json_token();
  const absl::string_view text =
      absl::StripTrailingAsciiWhitespace(absl::string_view(raw.data(), raw.size()));
  constexpr size_t kMaxShown = 40;
  if (text.size() > kMaxShown) return absl::StrCat(text.substr(0, kMaxShown), "...");
  return std::string(text);
}

// `x` as an int64 in [min, max] when it is integral and in range.
bool IntegralInRange(double x, int64_t min, int64_t max, int64_t& out) {
  // 2^63 as a double: every double below it converts to int64 exactly.
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (!(x >= -kTwoTo63 && x < kTwoTo63) || x != std::trunc(x)) return false;
  out = static_cast<int64_t>(x);
  return out >= min && out <= max;
}

}  // namespace

JsonValue::JsonValue(Context* context, const void* value, int depth)
    : context_(context), depth_(depth) {
  static_assert(sizeof(ondemand::value) <= sizeof(storage_) && alignof(ondemand::value) <= 8 &&
                    std::is_trivially_copyable_v<ondemand::value> &&
                    std::is_trivially_destructible_v<ondemand::value>,
                "storage_ must hold a simdjson::ondemand::value");
  new (storage_) ondemand::value(*static_cast<const ondemand::value*>(value));
}

std::string JsonValue::Path() const { return context_->Path(depth_); }

absl::Status JsonValue::Error(absl::string_view message) const {
  const std::string path = Path();
  return absl::InvalidArgumentError(
      path.empty() ? std::string(message) : absl::StrCat(path, ": ", message));
}

absl::Status JsonValue::UnknownKey(absl::string_view key,
                                   absl::Span<const absl::string_view> accepted) const {
  const std::string object = context_->Path(depth_ - 1);
  return absl::InvalidArgumentError(
      absl::StrCat(object, object.empty() ? "" : ": ", "unknown key '", key,
                   "'; accepted keys: ", absl::StrJoin(accepted, ", ")));
}

absl::Status JsonValue::SyntaxError(int code) {
  const auto error = static_cast<simdjson::error_code>(code);
  return Error(absl::StrCat("malformed JSON", context_->Location(), ": ",
                            simdjson::error_message(error)));
}

absl::Status JsonValue::AccessError(int code, absl::string_view what) {
  return code == simdjson::INCORRECT_TYPE ? ExpectedError(what) : SyntaxError(code);
}

absl::Status JsonValue::ExpectedError(absl::string_view what) {
  MROPE_ASSIGN_OR_RETURN(const Kind kind, this->kind());
  return Error(absl::StrCat("expected ", what, ", got ", KindName(kind)));
}

absl::Status JsonValue::CheckNesting() const {
  if (depth_ <= kMaxJsonDepth) return absl::OkStatus();
  return Error(absl::StrCat("arrays and objects nest deeper than ", kMaxJsonDepth, " levels"));
}

absl::StatusOr<JsonValue::Kind> JsonValue::kind() {
  ondemand::json_type type;
  if (auto error = Get(storage_).type().get(type)) return SyntaxError(error);
  return ToKind(type);
}

absl::StatusOr<bool> JsonValue::IsNull() {
  bool null = false;
  if (auto error = Get(storage_).is_null().get(null)) return SyntaxError(error);
  return null;
}

absl::Status JsonValue::ForEachField(
    absl::FunctionRef<absl::Status(absl::string_view key, JsonValue& value)> field) {
  MROPE_RETURN_IF_ERROR(CheckNesting());
  ondemand::object object;
  auto error = Get(storage_).get_object().get(object);
  if (error) return AccessError(error, "an object");
  PathPart& part = context_->part(depth_);
  for (auto member : object) {
    ondemand::field item;
    if ((error = std::move(member).get(item))) return SyntaxError(error);
    std::string_view key;
    if ((error = item.unescaped_key().get(key))) return SyntaxError(error);
    part = PathPart{absl::string_view(key.data(), key.size()), 0, false};
    JsonValue child(context_, &item.value(), depth_ + 1);
    MROPE_RETURN_IF_ERROR(field(part.key, child));
  }
  return absl::OkStatus();
}

absl::Status JsonValue::ForEachItem(
    absl::FunctionRef<absl::Status(int64_t index, JsonValue& item)> item) {
  MROPE_RETURN_IF_ERROR(CheckNesting());
  ondemand::array array;
  auto error = Get(storage_).get_array().get(array);
  if (error) return AccessError(error, "an array");
  PathPart& part = context_->part(depth_);
  int64_t index = 0;
  for (auto element : array) {
    ondemand::value value;
    if ((error = std::move(element).get(value))) return SyntaxError(error);
    part = PathPart{absl::string_view(), index, true};
    JsonValue child(context_, &value, depth_ + 1);
    MROPE_RETURN_IF_ERROR(item(index, child));
    ++index;
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> JsonValue::Int64(int64_t min, int64_t max) {
  ondemand::value& value = Get(storage_);
  int64_t x = 0;
  auto error = value.get_int64().get(x);
  if (!error && x >= min && x <= max) return x;
  // Not a plain int64 (2.0, 1e3, a quoted integer, or out of range): the slow path.
  ondemand::json_type type;
  if (auto type_error = value.type().get(type)) return SyntaxError(type_error);
  const std::string raw = RawText(value);
  bool integral = false;
  if (type == ondemand::json_type::number) {
    double d = 0;
    integral = error ? (!value.get_double().get(d) && IntegralInRange(d, min, max, x))
                     : false;
  } else if (type == ondemand::json_type::string) {
    std::string_view text;
    integral = !value.get_string().get(text) &&
               absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &x) && x >= min &&
               x <= max;
  } else {
    return ExpectedError("an integer");
  }
  if (integral) return x;
  return Error(absl::StrCat("expected an integer in [", min, ", ", max, "], got ", raw));
}

absl::StatusOr<double> JsonValue::Double() {
  ondemand::value& value = Get(storage_);
  double x = 0;
  if (!value.get_double().get(x) && std::isfinite(x)) return x;
  ondemand::json_type type;
  if (auto error = value.type().get(type)) return SyntaxError(error);
  if (type != ondemand::json_type::number) return ExpectedError("a number");
  return Error(absl::StrCat("expected a finite number, got ", RawText(value)));
}

absl::StatusOr<bool> JsonValue::Bool() {
  bool x = false;
  if (auto error = Get(storage_).get_bool().get(x)) return AccessError(error, "true or false");
  return x;
}

absl::StatusOr<std::string> JsonValue::String() {
  std::string_view x;
  if (auto error = Get(storage_).get_string().get(x)) return AccessError(error, "a string");
  return std::string(x);
}

absl::Status JsonValue::Skip() {
  MROPE_ASSIGN_OR_RETURN(const Kind kind, this->kind());
  if (kind == Kind::kArray) {
    return ForEachItem([](int64_t, JsonValue& item) { return item.Skip(); });
  }
  if (kind == Kind::kObject) {
    return ForEachField([](absl::string_view, JsonValue& value) { return value.Skip(); });
  }
  return absl::OkStatus();  // a scalar: the parser passes over it
}

absl::Status JsonValueAccess::Read(simdjson::padded_string_view text,
                                   absl::FunctionRef<absl::Status(JsonValue&)> read) {
  if (static_cast<int64_t>(text.length()) > kMaxJsonBytes) {
    return absl::InvalidArgumentError(absl::StrCat("JSON text of ", text.length(),
                                                   " bytes exceeds the limit of ", kMaxJsonBytes));
  }
  const absl::string_view content =
      absl::StripAsciiWhitespace(absl::string_view(text.data(), text.length()));
  if (!content.empty() && content.front() != '{' && content.front() != '[') {
    return absl::InvalidArgumentError("expected a JSON object or array");
  }
  // The parser does not notice every truncated document (`[1, 2` reads as a bad number).
  if (!content.empty() && content.back() != '}' && content.back() != ']') {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed JSON: the text ends with '", content.substr(content.size() - 1),
        "', not with the '}' or ']' that closes a top-level object or array"));
  }
  ondemand::parser parser;
  ondemand::document doc;
  ondemand::value root;
  auto error = parser.iterate(text).get(doc);
  if (!error) error = doc.get_value().get(root);
  if (error) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed JSON: ", simdjson::error_message(error)));
  }
  JsonValue::Context context(doc, text.data());
  JsonValue value(&context, &root, 1);
  MROPE_RETURN_IF_ERROR(read(value));
  const char* rest = nullptr;
  if (doc.current_location().get(rest) == simdjson::SUCCESS) {  // not at the end
    return absl::InvalidArgumentError(
        absl::StrCat("malformed JSON", context.Location(), ": text after the top-level value"));
  }
  return absl::OkStatus();
}

absl::Status ReadJson(const std::string& text, absl::FunctionRef<absl::Status(JsonValue&)> read) {
  if (text.capacity() >= text.size() + simdjson::SIMDJSON_PADDING) {
    return JsonValueAccess::Read(simdjson::padded_string_view(text), read);
  }
  return ReadJson(absl::string_view(text), read);
}

absl::Status ReadJson(absl::string_view text, absl::FunctionRef<absl::Status(JsonValue&)> read) {
  if (static_cast<int64_t>(text.size()) > kMaxJsonBytes) {
    return absl::InvalidArgumentError(absl::StrCat("JSON text of ", text.size(),
                                                   " bytes exceeds the limit of ", kMaxJsonBytes));
  }
  const simdjson::padded_string padded(text.data(), text.size());
  return JsonValueAccess::Read(padded, read);
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::string text;
  if (path == "-") {
    // Read in chunks so that a huge stdin stops at the limit instead of filling memory.
    char chunk[1 << 16];
    while (std::cin.read(chunk, sizeof(chunk)) || std::cin.gcount() > 0) {
      text.append(chunk, static_cast<size_t>(std::cin.gcount()));
      if (static_cast<int64_t>(text.size()) > kMaxJsonBytes) {
        return absl::InvalidArgumentError(
            absl::StrCat("stdin: input exceeds the limit of ", kMaxJsonBytes, " bytes"));
      }
    }
    text.reserve(text.size() + simdjson::SIMDJSON_PADDING);
    return text;
  }
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open file '", path, "'"));
  const std::streamoff size = in.tellg();
  if (size < 0) return absl::InvalidArgumentError(absl::StrCat("cannot read file '", path, "'"));
  if (size > kMaxJsonBytes) {
    return absl::InvalidArgumentError(absl::StrCat("file '", path, "' has ", size,
                                                   " bytes, over the limit of ", kMaxJsonBytes));
  }
  text.reserve(static_cast<size_t>(size) + simdjson::SIMDJSON_PADDING);
  text.resize(static_cast<size_t>(size));
  in.seekg(0);
  if (!in.read(text.data(), size)) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read file '", path, "'"));
  }
  return text;
}

}  // namespace mrope
