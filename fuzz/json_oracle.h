#ifndef MROPE_FUZZ_JSON_ORACLE_H_
#define MROPE_FUZZ_JSON_ORACLE_H_

// A second opinion on mrope's JSON reader: rapidjson's own DOM parser (the same string code
// and number grammar, but its own grammar for containers, which mrope's reader does itself).
// For text the DOM parser can judge (no NUL byte, an object or array at the top, nesting
// within kMaxJsonDepth), both must accept or both refuse (mrope also refuses numbers past the
// double range), and accepted documents must be equal, numbers to the bit.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "fuzz/fuzz_input.h"
#include "google/protobuf/struct.pb.h"
#include "mrope/common/json_reader.h"
#include "rapidjson/document.h"
#include "rapidjson/memorystream.h"

namespace mrope::fuzz {

// Nesting depth of `value` (1 for a scalar).
inline int JsonDepth(const rapidjson::Value& value) {
  int depth = 0;
  if (value.IsArray()) {
    for (const auto& item : value.GetArray()) depth = std::max(depth, JsonDepth(item));
  } else if (value.IsObject()) {
    for (const auto& member : value.GetObject()) depth = std::max(depth, JsonDepth(member.value));
  }
  return depth + 1;
}

// rapidjson's DOM without kParseFullPrecisionFlag rounds numbers loosely (a 100-digit integer
// is off by many ulp), and its full-precision path has undefined behaviour at the ends of the
// double range (json_reader.cc). So the oracle parses twice: once for the types, once with
// numbers kept as their text, which glibc's correctly rounding strtod converts. mrope must
// give exactly that double, and refuse the document when it is infinite.
inline double NearestDouble(const rapidjson::Value& number_text) {
  return std::strtod(number_text.GetString(), nullptr);
}

// Whether a number of `theirs` (`texts`: the same document, numbers as text) is past the
// double range.
inline bool HasInfiniteNumber(const rapidjson::Value& theirs, const rapidjson::Value& texts) {
  if (theirs.IsNumber()) return std::isinf(NearestDouble(texts));
  if (theirs.IsArray()) {
    for (rapidjson::SizeType i = 0; i < theirs.Size(); ++i) {
      if (HasInfiniteNumber(theirs[i], texts[i])) return true;
    }
  } else if (theirs.IsObject()) {
    for (auto member = theirs.MemberBegin(); member != theirs.MemberEnd(); ++member) {
      if (HasInfiniteNumber(member->value,
                            (texts.MemberBegin() + (member - theirs.MemberBegin()))->value)) {
        return true;
      }
    }
  }
  return false;
}

// Whether the tree mrope built equals rapidjson's (numbers as their nearest double, as mrope
// keeps them; duplicate keys: the last one wins in mrope's tree).
inline bool SameJson(const google::protobuf::Value& ours, const rapidjson::Value& theirs,
                     const rapidjson::Value& texts) {
  using google::protobuf::Value;
  switch (ours.kind_case()) {
    case Value::kNullValue:
      return theirs.IsNull();
    case Value::kBoolValue:
      return theirs.IsBool() && theirs.GetBool() == ours.bool_value();
    case Value::kNumberValue:
      return theirs.IsNumber() && NearestDouble(texts) == ours.number_value();
    case Value::kStringValue:
      return theirs.IsString() &&
             absl::string_view(theirs.GetString(), theirs.GetStringLength()) == ours.string_value();
    case Value::kListValue: {
      if (!theirs.IsArray() ||
          theirs.Size() != static_cast<unsigned>(ours.list_value().values_size())) {
        return false;
      }
      for (int i = 0; i < ours.list_value().values_size(); ++i) {
        if (!SameJson(ours.list_value().values(i), theirs[i], texts[i])) return false;
      }
      return true;
    }
    case Value::kStructValue: {
      if (!theirs.IsObject()) return false;
      int distinct_keys = 0;
      for (auto member = theirs.MemberBegin(); member != theirs.MemberEnd(); ++member) {
        bool last = true;  // the occurrence of its key that mrope keeps
        for (auto later = member + 1; later != theirs.MemberEnd(); ++later) {
          if (later->name == member->name) last = false;
        }
        if (!last) continue;
        ++distinct_keys;
        const std::string key(member->name.GetString(), member->name.GetStringLength());
        const auto found = ours.struct_value().fields().find(key);
        const rapidjson::Value& text =
            (texts.MemberBegin() + (member - theirs.MemberBegin()))->value;
        if (found == ours.struct_value().fields().end() ||
            !SameJson(found->second, member->value, text)) {
          return false;
        }
      }
      return distinct_keys == ours.struct_value().fields_size();
    }
    default:
      return false;
  }
}

// Checks ParseJson's verdict on `text` (`ours`) against rapidjson's DOM parser.
inline void CheckAgainstRapidjson(absl::string_view text,
                                  const absl::StatusOr<google::protobuf::Value>& ours) {
  if (text.find('\0') != absl::string_view::npos) return;  // the DOM parser stops at a NUL
  constexpr unsigned kFlags =
      rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;
  // Through a bare MemoryStream: Document::Parse would skip any of the BOM's three bytes
  // anywhere before the value, even alone, which mrope refuses.
  const auto parse = [&](rapidjson::Document& document, auto flags) {
    rapidjson::MemoryStream stream(text.data(), text.size());
    document.ParseStream<decltype(flags)::value>(stream);
  };
  rapidjson::Document theirs;
  parse(theirs, std::integral_constant<unsigned, kFlags>());
  if (!theirs.HasParseError() &&
      (!(theirs.IsObject() || theirs.IsArray()) || JsonDepth(theirs) > kMaxJsonDepth)) {
    return;  // refused by mrope on purpose
  }
  if (theirs.HasParseError()) {
    FUZZ_CHECK(!ours.ok(), "mrope accepts what rapidjson's DOM refuses");
    return;
  }
  rapidjson::Document texts;  // accepted too: only the numbers' form differs
  parse(texts, std::integral_constant<unsigned, kFlags | rapidjson::kParseNumbersAsStringsFlag>());
  FUZZ_CHECK(!texts.HasParseError(), "rapidjson refuses its document with numbers as text");
  const bool infinite = HasInfiniteNumber(theirs, texts);
  FUZZ_CHECK(ours.ok() == !infinite,
             absl::StrCat("mrope ", ours.ok() ? "accepts" : "refuses",
                          " what rapidjson's DOM accepts",
                          infinite ? " with a number past the double range" : "", ": ",
                          ours.status().ToString()));
  if (ours.ok()) {
    FUZZ_CHECK(SameJson(*ours, theirs, texts), "mrope and rapidjson read different values");
  }
}

}  // namespace mrope::fuzz

#endif  // MROPE_FUZZ_JSON_ORACLE_H_
