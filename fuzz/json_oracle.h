#ifndef MROPE_FUZZ_JSON_ORACLE_H_
#define MROPE_FUZZ_JSON_ORACLE_H_

// A second opinion on mrope's JSON reader: rapidjson's own DOM parser (the same number and
// string code, but its own grammar for containers, which mrope's reader does itself). For text
// the DOM parser can judge (no NUL byte, an object or array at the top, nesting within
// kMaxJsonDepth), both must accept or both refuse, and accepted documents must be equal.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "fuzz/fuzz_input.h"
#include "google/protobuf/struct.pb.h"
#include "mrope/common/json_reader.h"
#include "rapidjson/document.h"

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

// Whether `value` holds a number rapidjson read as infinite or within a few ulp of DBL_MAX.
// mrope refuses numbers whose nearest double is infinite; rapidjson, without full precision,
// may round either way there, so such documents have no verdict to compare.
inline bool AtDoubleRangeEnd(const rapidjson::Value& value) {
  if (value.IsDouble()) {
    return !(std::fabs(value.GetDouble()) < std::numeric_limits<double>::max() *
                                                 (1 - 8 * std::numeric_limits<double>::epsilon()));
  }
  if (value.IsArray()) {
    for (const auto& item : value.GetArray()) {
      if (AtDoubleRangeEnd(item)) return true;
    }
  } else if (value.IsObject()) {
    for (const auto& member : value.GetObject()) {
      if (AtDoubleRangeEnd(member.value)) return true;
    }
  }
  return false;
}

// Whether the tree mrope built equals rapidjson's (numbers as doubles, as mrope keeps them;
// duplicate keys: the last one wins in mrope's tree).
inline bool SameJson(const google::protobuf::Value& ours, const rapidjson::Value& theirs) {
  using google::protobuf::Value;
  switch (ours.kind_case()) {
    case Value::kNullValue:
      return theirs.IsNull();
    case Value::kBoolValue:
      return theirs.IsBool() && theirs.GetBool() == ours.bool_value();
    case Value::kNumberValue:  // theirs without full precision: within 2 ulp (of denormals too)
      return theirs.IsNumber() &&
             std::fabs(theirs.GetDouble() - ours.number_value()) <=
                 4 * std::numeric_limits<double>::epsilon() * std::fabs(ours.number_value()) +
                     4 * std::numeric_limits<double>::denorm_min();
    case Value::kStringValue:
      return theirs.IsString() &&
             absl::string_view(theirs.GetString(), theirs.GetStringLength()) == ours.string_value();
    case Value::kListValue: {
      if (!theirs.IsArray() || theirs.Size() != static_cast<unsigned>(ours.list_value().values_size())) {
        return false;
      }
      for (int i = 0; i < ours.list_value().values_size(); ++i) {
        if (!SameJson(ours.list_value().values(i), theirs[i])) return false;
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
        if (found == ours.struct_value().fields().end() || !SameJson(found->second, member->value)) {
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
  rapidjson::Document theirs;
  // Without kParseFullPrecisionFlag: rapidjson 1.1.0's full-precision path has undefined
  // behaviour at the ends of the double range (json_reader.cc), which mrope's reader avoids.
  theirs.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag>(
      text.data(), text.size());
  if (!theirs.HasParseError() &&
      (!(theirs.IsObject() || theirs.IsArray()) || JsonDepth(theirs) > kMaxJsonDepth ||
       AtDoubleRangeEnd(theirs))) {
    return;  // refused by mrope on purpose, or (the range end) judged within rounding
  }
  FUZZ_CHECK(ours.ok() == !theirs.HasParseError(),
             absl::StrCat("mrope ", ours.ok() ? "accepts" : "refuses", " what rapidjson's DOM ",
                          theirs.HasParseError() ? "refuses" : "accepts", ": ",
                          ours.status().ToString()));
  if (ours.ok()) FUZZ_CHECK(SameJson(*ours, theirs), "mrope and rapidjson read different values");
}

}  // namespace mrope::fuzz

#endif  // MROPE_FUZZ_JSON_ORACLE_H_
