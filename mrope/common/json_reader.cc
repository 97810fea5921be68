#include "mrope/common/json_reader.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mrope/common/status_macros.h"
#include "rapidjson/error/en.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/reader.h"

namespace mrope {
namespace {

namespace rj = ::rapidjson;

// One scalar: stop after it, validate UTF-8 in strings. Not kParseFullPrecisionFlag: rapidjson
// 1.1.0's full-precision conversion has undefined behaviour at the ends of the double range
// (found by config_json_fuzzer: __builtin_clzll(0) on 0e99, its power-of-ten table read out of
// bounds on 300 digits then e99 and on 0.<400 zeros>1e-10). Doubles are converted from their
// text by Abseil's exact from_chars instead (Context::ParseScalar).
constexpr unsigned kScalarFlags = rj::kParseStopWhenDoneFlag | rj::kParseValidateEncodingFlag;
// A skipped value: the same grammar, with an explicit stack instead of recursion.
constexpr unsigned kSkipFlags = kScalarFlags | rj::kParseIterativeFlag;

// Where one value, key or container's children sit in the document.
struct PathPart {
  std::string key;    // an object's key (owned: later strings reuse the parser's buffer)
  int64_t index = 0;  // an array's index
  bool is_index = false;
};

// path[d - 1] names the children of the container at depth d (the root's depth is 1).
using PathParts = std::array<PathPart, kMaxJsonDepth + 1>;

// Tracks a skipped value's containers so that a refusal names the path of the value at fault.
class SkipHandler : public rj::BaseReaderHandler<rj::UTF8<>, SkipHandler> {
 public:
  SkipHandler(PathParts& path, int depth) : path_(path), first_(depth), depth_(depth - 1) {}

  bool too_deep() const { return too_deep_; }
  // The depth of the value being read when the parser stopped.
  int error_depth() const { return depth_ + 1; }

  bool Default() { return ValueDone(); }
  bool StartObject() { return Open(false); }
  bool StartArray() { return Open(true); }
  bool Key(const char* text, rj::SizeType length, bool) {
    PartAt(depth_).key.assign(text, length);
    return true;
  }
  bool EndObject(rj::SizeType) { return Close(); }
  bool EndArray(rj::SizeType) { return Close(); }

 private:
  bool Open(bool array) {
    if (depth_ + 1 > kMaxJsonDepth) {
      too_deep_ = true;
      return false;
    }
    ++depth_;
    PathPart& part = PartAt(depth_);
    part.is_index = array;
    part.index = 0;
    return true;
  }
  bool Close() {
    --depth_;
    return ValueDone();
  }
  // A value of the innermost open container is complete: the next one has the next index.
  bool ValueDone() {
    if (depth_ >= first_ && PartAt(depth_).is_index) ++PartAt(depth_).index;
    return true;
  }

  PathPart& PartAt(int depth) { return path_[depth - 1]; }

  PathParts& path_;
  const int first_;  // the skipped value's depth
  int depth_;        // the innermost open container's depth
  bool too_deep_ = false;
};

// The scalar one Parse call emits. Containers are never parsed as scalars (the caller looks at
// the first character), so their events refuse.
struct ScalarEvent : rj::BaseReaderHandler<rj::UTF8<>, ScalarEvent> {
  enum class Type { kNull, kBool, kInt64, kUint64, kDouble, kString };
  Type type = Type::kNull;
  bool boolean = false;
  int64_t int64 = 0;
  uint64_t uint64 = 0;  // only above INT64_MAX
  double number = 0;
  std::string* string = nullptr;  // where a string goes

  bool Default() { return false; }
  bool Null() { return Set(Type::kNull); }
  bool Bool(bool x) {
    boolean = x;
    return Set(Type::kBool);
  }
  bool Int(int x) { return Int64(x); }
  bool Uint(unsigned x) { return Int64(x); }
  bool Int64(int64_t x) {
    int64 = x;
    return Set(Type::kInt64);
  }
  bool Uint64(uint64_t x) {
    if (x <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Int64(static_cast<int64_t>(x));
    }
    uint64 = x;
    return Set(Type::kUint64);
  }
  bool Double(double x) {
    number = x;
    return Set(Type::kDouble);
  }
  bool String(const char* text, rj::SizeType length, bool) {
    string->assign(text, length);
    return Set(Type::kString);
  }

  bool Set(Type t) {
    type = t;
    return true;
  }
};

// Whether a JSON number's text (valid JSON grammar) is an integer: no nonzero digit after the
// decimal point once the exponent has moved it. Judged on the text because rounding to a
// double can make a fraction integral (1.00000000000000000001 is the double 1).
bool IntegralText(absl::string_view number) {
  const size_t e = number.find_first_of("eE");
  int64_t exponent = 0;  // saturated: beyond 2^30 the answer no longer changes
  if (e != absl::string_view::npos) {
    const bool negative = number[e + 1] == '-';
    for (const char c : number.substr(e + 1)) {
      if (c >= '0' && c <= '9') exponent = std::min<int64_t>(exponent * 10 + (c - '0'), 1 << 30);
    }
    if (negative) exponent = -exponent;
  }
  int64_t digits_before_point = 0;  // of the mantissa as written
  int64_t digit = 0;                // index among the mantissa's digits
  int64_t last_nonzero = -1;
  for (const char c : number.substr(0, e)) {
    if (c == '.') digits_before_point = digit;
    if (c < '0' || c > '9') continue;
    if (c != '0') last_nonzero = digit;
    ++digit;
  }
  if (number.substr(0, e).find('.') == absl::string_view::npos) digits_before_point = digit;
  return last_nonzero < digits_before_point + exponent;
}

// The number `x` read from `text` as an int64 in [min, max] when its text is an integer and
// |x| < 2^53: below it doubles hold every integer and the exact conversion gave the text's
// value; from 2^53 on it may be a neighbour (9007199254740993.0 reads as 2^53).
bool IntegralInRange(double x, absl::string_view text, int64_t min, int64_t max, int64_t& out) {
  constexpr double kTwoTo53 = 9007199254740992.0;
  if (!(x > -kTwoTo53 && x < kTwoTo53) || !IntegralText(text)) return false;
  out = static_cast<int64_t>(x);
  return out >= min && out <= max;
}

absl::string_view KindName(JsonValue::Kind kind) {
  // In the order of JsonValue::Kind.
  constexpr absl::string_view kNames[] = {"null",     "a bool",   "a number",
                                          "a string", "an array", "an object"};
  return kNames[static_cast<int>(kind)];
}

bool IsNumberChar(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

}  // namespace

// The state shared by the values of one document: the text and the read position, the path of
// the value being read, and the parser.
class JsonValue::Context {
 public:
  explicit Context(absl::string_view text) : stream_(text.data(), text.size()) {}

  int64_t offset() const { return static_cast<int64_t>(stream_.Tell()); }
  // The next character, '\0' at the end (ReadJson refuses text holding NUL bytes).
  char Peek() const { return stream_.Peek(); }
  void Take() { stream_.Take(); }
  void SkipWhitespace() { rj::SkipWhitespace(stream_); }
  absl::string_view Text(int64_t begin, int64_t end) const {
    return absl::string_view(stream_.begin_ + begin, static_cast<size_t>(end - begin));
  }
  int64_t end() const { return static_cast<int64_t>(stream_.size_); }

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

  // Parses the scalar at the read position into `event` (a string into `string`); returns the
  // parse error code. A double is the correctly rounded value of its text (infinite past the
  // double range).
  rj::ParseErrorCode ParseScalar(ScalarEvent& event, std::string& string) {
    event.string = &string;
    const int64_t begin = offset();
    reader_.Parse<kScalarFlags>(stream_, event);
    if (!reader_.HasParseError() && event.type == ScalarEvent::Type::kDouble) {
      // rapidjson has checked the JSON number grammar, which from_chars accepts.
      const bool converted = absl::SimpleAtod(Text(begin, offset()), &event.number);
      assert(converted);
      static_cast<void>(converted);
    }
    return reader_.GetParseErrorCode();
  }

  // Skips the value at the read position, whose depth is `depth`; refuses containers deeper
  // than kMaxJsonDepth. On failure, `error_depth` is the depth of the value at fault.
  rj::ParseErrorCode Skip(int depth, bool& too_deep, int& error_depth);

  // The parser's last error: its message and where it happened.
  std::string ParseErrorMessage() const {
    return absl::StrCat("malformed JSON at byte ", reader_.GetErrorOffset(), ": ",
                        rj::GetParseError_En(reader_.GetParseErrorCode()));
  }

  // A scratch string for string values; keys go into their PathPart.
  std::string& scratch() { return scratch_; }

 private:
  rj::MemoryStream stream_;
  rj::Reader reader_;
  std::string scratch_;
  PathParts path_;
};

rj::ParseErrorCode JsonValue::Context::Skip(int depth, bool& too_deep, int& error_depth) {
  SkipHandler handler(path_, depth);
  reader_.Parse<kSkipFlags>(stream_, handler);
  too_deep = handler.too_deep();
  error_depth = handler.error_depth();
  return reader_.GetParseErrorCode();
}

// Parses a document and reads its root (ReadJson's body; a friend of JsonValue).
struct JsonValueAccess {
  static absl::Status Read(absl::string_view text,
                           absl::FunctionRef<absl::Status(JsonValue&)> read) {
    JsonValue::Context context(text);
    context.SkipWhitespace();
    const char first = context.Peek();
    if (first != '{' && first != '[') {
      return absl::InvalidArgumentError(
          first == '\0' ? "malformed JSON: the text holds no value"
                        : "expected a JSON object or array");
    }
    JsonValue root(&context, 1);
    MROPE_RETURN_IF_ERROR(read(root));
    MROPE_RETURN_IF_ERROR(root.SkipIfUnread());
    context.SkipWhitespace();
    if (context.Peek() != '\0') {
      return absl::InvalidArgumentError(absl::StrCat(
          "malformed JSON at byte ", context.offset(), ": text after the top-level value"));
    }
    return absl::OkStatus();
  }
};

JsonValue::JsonValue(Context* context, int depth)
    : context_(context), depth_(depth), offset_(context->offset()) {}

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

absl::Status JsonValue::SyntaxError(absl::string_view message) const {
  return Error(absl::StrCat("malformed JSON at byte ", context_->offset(), ": ", message));
}

absl::Status JsonValue::CheckUnread() const {
  if (context_->offset() == offset_) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(Path(), ": the value was already read"));
}

absl::Status JsonValue::ExpectedError(absl::string_view what) {
  MROPE_ASSIGN_OR_RETURN(const Kind kind, this->kind());
  return Error(absl::StrCat("expected ", what, ", got ", KindName(kind)));
}

std::string JsonValue::ShownText(bool parsed) const {
  int64_t end = context_->offset();
  if (!parsed) {  // the parser stopped inside the number
    const absl::string_view rest = context_->Text(offset_, context_->end());
    end = offset_;
    while (end - offset_ < static_cast<int64_t>(rest.size()) && IsNumberChar(rest[end - offset_])) {
      ++end;
    }
  }
  const absl::string_view text = context_->Text(offset_, end);
  constexpr size_t kMaxShown = 40;
  if (text.size() > kMaxShown) return absl::StrCat(text.substr(0, kMaxShown), "...");
  return std::string(text);
}

absl::StatusOr<JsonValue::Kind> JsonValue::kind() {
  MROPE_RETURN_IF_ERROR(CheckUnread());
  const char c = context_->Peek();
  switch (c) {
    case '{':
      return Kind::kObject;
    case '[':
      return Kind::kArray;
    case '"':
      return Kind::kString;
    case 't':
    case 'f':
      return Kind::kBool;
    case 'n':
      return Kind::kNull;
    case '\0':
      return SyntaxError("the text ends where a value should start");
    default:
      if (c == '-' || (c >= '0' && c <= '9')) return Kind::kNumber;
      return SyntaxError(absl::StrCat("expected a value, got '", absl::string_view(&c, 1), "'"));
  }
}

absl::StatusOr<bool> JsonValue::IsNull() {
  MROPE_ASSIGN_OR_RETURN(const Kind kind, this->kind());
  if (kind != Kind::kNull) return false;
  MROPE_RETURN_IF_ERROR(Skip());
  return true;
}

absl::Status JsonValue::Open(Kind container, absl::string_view what) {
  MROPE_ASSIGN_OR_RETURN(const Kind kind, this->kind());
  if (kind != container) return Error(absl::StrCat("expected ", what, ", got ", KindName(kind)));
  if (depth_ > kMaxJsonDepth) {
    return Error(absl::StrCat("arrays and objects nest deeper than ", kMaxJsonDepth, " levels"));
  }
  context_->Take();
  context_->SkipWhitespace();
  return absl::OkStatus();
}

absl::Status JsonValue::SkipIfUnread() {
  return context_->offset() == offset_ ? Skip() : absl::OkStatus();
}

absl::StatusOr<bool> JsonValue::EndOfMember(char close, absl::string_view text_ends,
                                            absl::string_view unexpected) const {
  context_->SkipWhitespace();
  const char next = context_->Peek();
  if (next != ',' && next != close) return SyntaxError(next == '\0' ? text_ends : unexpected);
  context_->Take();
  if (next == close) return true;
  context_->SkipWhitespace();
  return false;
}

absl::Status JsonValue::ForEachField(
    absl::FunctionRef<absl::Status(absl::string_view key, JsonValue& value)> field) {
  MROPE_RETURN_IF_ERROR(Open(Kind::kObject, "an object"));
  if (context_->Peek() == '}') {
    context_->Take();
    return absl::OkStatus();
  }
  PathPart& part = context_->part(depth_);
  part.is_index = false;
  while (true) {
    if (context_->Peek() != '"') return SyntaxError("expected a key in quotes");
    ScalarEvent event;
    if (context_->ParseScalar(event, part.key) != rj::kParseErrorNone) {
      return Error(context_->ParseErrorMessage());
    }
    context_->SkipWhitespace();
    if (context_->Peek() != ':') return SyntaxError("expected ':' after a key");
    context_->Take();
    context_->SkipWhitespace();
    JsonValue child(context_, depth_ + 1);
    MROPE_RETURN_IF_ERROR(field(part.key, child));
    MROPE_RETURN_IF_ERROR(child.SkipIfUnread());
    MROPE_ASSIGN_OR_RETURN(const bool closed,
                           EndOfMember('}', "the text ends inside an object",
                                       "expected ',' or '}' after an object's value"));
    if (closed) return absl::OkStatus();
  }
}

absl::Status JsonValue::ForEachItem(
    absl::FunctionRef<absl::Status(int64_t index, JsonValue& item)> item) {
  MROPE_RETURN_IF_ERROR(Open(Kind::kArray, "an array"));
  if (context_->Peek() == ']') {
    context_->Take();
    return absl::OkStatus();
  }
  PathPart& part = context_->part(depth_);
  part.is_index = true;
  for (int64_t index = 0;; ++index) {
    part.index = index;
    JsonValue child(context_, depth_ + 1);
    MROPE_RETURN_IF_ERROR(item(index, child));
    MROPE_RETURN_IF_ERROR(child.SkipIfUnread());
    MROPE_ASSIGN_OR_RETURN(const bool closed,
                           EndOfMember(']', "the text ends inside an array",
                                       "expected ',' or ']' after an array's item"));
    if (closed) return absl::OkStatus();
  }
}

absl::StatusOr<int64_t> JsonValue::Int64(int64_t min, int64_t max) {
  MROPE_ASSIGN_OR_RETURN(const Kind kind, this->kind());
  if (kind != Kind::kNumber && kind != Kind::kString) return ExpectedError("an integer");
  ScalarEvent event;
  const rj::ParseErrorCode error = context_->ParseScalar(event, context_->scratch());
  if (error != rj::kParseErrorNone && error != rj::kParseErrorNumberTooBig) {
    return Error(context_->ParseErrorMessage());
  }
  bool integral = false;
  int64_t x = 0;
  // Past DBL_MAX (kParseErrorNumberTooBig) is past int64 too, like above INT64_MAX.
  switch (error == rj::kParseErrorNone ? event.type : ScalarEvent::Type::kUint64) {
    case ScalarEvent::Type::kInt64:
      x = event.int64;
      integral = x >= min && x <= max;
      break;
    case ScalarEvent::Type::kDouble:
      integral = IntegralInRange(event.number, context_->Text(offset_, context_->offset()), min,
                                 max, x);
      break;
    case ScalarEvent::Type::kString:  // proto3 JSON writes 64-bit integers as strings
      integral = absl::SimpleAtoi(context_->scratch(), &x) && x >= min && x <= max;
      break;
    default:  // above INT64_MAX
      break;
  }
  if (integral) return x;
  return Error(absl::StrCat("expected an integer in [", min, ", ", max, "], got ",
                            ShownText(error == rj::kParseErrorNone)));
}

absl::StatusOr<double> JsonValue::Double() {
  MROPE_ASSIGN_OR_RETURN(const Kind kind, this->kind());
  if (kind != Kind::kNumber) return ExpectedError("a number");
  ScalarEvent event;
  const rj::ParseErrorCode error = context_->ParseScalar(event, context_->scratch());
  if (error != rj::kParseErrorNone && error != rj::kParseErrorNumberTooBig) {
    return Error(context_->ParseErrorMessage());
  }
  // rapidjson refuses some numbers past the double range; the others convert to infinity.
  double x = std::numeric_limits<double>::infinity();
  if (error == rj::kParseErrorNone) {
    switch (event.type) {
      case ScalarEvent::Type::kInt64:
        x = static_cast<double>(event.int64);
        break;
      case ScalarEvent::Type::kUint64:
        x = static_cast<double>(event.uint64);
        break;
      default:
        x = event.number;
        break;
    }
  }
  if (!std::isfinite(x)) {
    return Error(absl::StrCat("expected a finite number, got ",
                              ShownText(error == rj::kParseErrorNone)));
  }
  return x;
}

absl::StatusOr<bool> JsonValue::Bool() {
  MROPE_ASSIGN_OR_RETURN(const Kind kind, this->kind());
  if (kind != Kind::kBool) return ExpectedError("true or false");
  ScalarEvent event;
  if (context_->ParseScalar(event, context_->scratch()) != rj::kParseErrorNone) {
    return Error(context_->ParseErrorMessage());
  }
  return event.boolean;
}

absl::StatusOr<std::string> JsonValue::String() {
  MROPE_ASSIGN_OR_RETURN(const Kind kind, this->kind());
  if (kind != Kind::kString) return ExpectedError("a string");
  ScalarEvent event;
  if (context_->ParseScalar(event, context_->scratch()) != rj::kParseErrorNone) {
    return Error(context_->ParseErrorMessage());
  }
  return context_->scratch();
}

absl::Status JsonValue::Skip() {
  MROPE_RETURN_IF_ERROR(CheckUnread());
  bool too_deep = false;
  int error_depth = depth_;
  if (context_->Skip(depth_, too_deep, error_depth) == rj::kParseErrorNone) {
    return absl::OkStatus();
  }
  const std::string path = context_->Path(error_depth);
  const std::string prefix = path.empty() ? "" : absl::StrCat(path, ": ");
  if (too_deep) {
    return absl::InvalidArgumentError(absl::StrCat(
        prefix, "arrays and objects nest deeper than ", kMaxJsonDepth, " levels"));
  }
  return absl::InvalidArgumentError(absl::StrCat(prefix, context_->ParseErrorMessage()));
}

absl::Status ReadJson(absl::string_view text, absl::FunctionRef<absl::Status(JsonValue&)> read) {
  if (static_cast<int64_t>(text.size()) > kMaxJsonBytes) {
    return absl::InvalidArgumentError(absl::StrCat("JSON text of ", text.size(),
                                                   " bytes exceeds the limit of ", kMaxJsonBytes));
  }
  // The parser takes '\0' for the end of the text.
  if (const void* nul = std::memchr(text.data(), '\0', text.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed JSON: a NUL byte at byte ", static_cast<const char*>(nul) - text.data()));
  }
  return JsonValueAccess::Read(text, read);
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
  text.resize(static_cast<size_t>(size));
  in.seekg(0);
  if (!in.read(text.data(), size)) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read file '", path, "'"));
  }
  return text;
}

}  // namespace mrope
