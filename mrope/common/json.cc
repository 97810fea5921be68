#include "mrope/common/json.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mrope/common/status_macros.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;

constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

absl::string_view KindName(const Value& value) {
  switch (value.kind_case()) {
    case Value::kNullValue:
      return "null";
    case Value::kNumberValue:
      return "number";
    case Value::kStringValue:
      return "string";
    case Value::kBoolValue:
      return "bool";
    case Value::kStructValue:
      return "object";
    case Value::kListValue:
      return "array";
    default:
      return "nothing";
  }
}

absl::Status TypeError(const Value& value, absl::string_view path, absl::string_view want) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": expected ", want, ", got ", KindName(value)));
}

// Walks a nested array depth-first, checking that it is rectangular, and calls `leaf` on every
// scalar in row-major order. The first scalar fixes the rank: `shape` is then complete.
template <typename Leaf>
absl::Status WalkNested(const Value& value, const std::string& path, size_t depth,
                        std::vector<int64_t>& shape, bool& rank_fixed, Leaf&& leaf) {
  if (value.kind_case() != Value::kListValue) {
    if (depth < shape.size()) return TypeError(value, path, "array");
    rank_fixed = true;
    return leaf(value, path);
  }
  const auto& items = value.list_value().values();
  if (depth == shape.size() && rank_fixed) {
    // Fuzzer finding (tests/regression/json_regression_test.cc): [[1, 2, [3]]] read as [1, 3, 1]
    // with 3 values; a shape must describe every value.
    return TypeError(value, path, "a number (the array is not rectangular)");
  }
  if (depth == shape.size()) {
    // First time this depth is reached: it fixes the dimension (only along the first path).
    shape.push_back(items.size());
  } else if (shape[depth] != items.size()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ragged array, expected ",
                                                   shape[depth], " items, got ", items.size()));
  }
  for (int i = 0; i < items.size(); ++i) {
    MROPE_RETURN_IF_ERROR(WalkNested(items[i], absl::StrCat(path, "[", i, "]"), depth + 1, shape,
                                     rank_fixed, leaf));
  }
  return absl::OkStatus();
}

// Copies a document into a Value tree.
absl::Status ToValue(JsonValue& json, Value& out) {
  MROPE_ASSIGN_OR_RETURN(const JsonValue::Kind kind, json.kind());
  switch (kind) {
    case JsonValue::Kind::kNull:
      MROPE_RETURN_IF_ERROR(json.Skip());
      out.set_null_value(google::protobuf::NULL_VALUE);
      return absl::OkStatus();
    case JsonValue::Kind::kBool: {
      MROPE_ASSIGN_OR_RETURN(const bool x, json.Bool());
      out.set_bool_value(x);
      return absl::OkStatus();
    }
    case JsonValue::Kind::kNumber: {
      MROPE_ASSIGN_OR_RETURN(const double x, json.Double());
      out.set_number_value(x);
      return absl::OkStatus();
    }
    case JsonValue::Kind::kString: {
      MROPE_ASSIGN_OR_RETURN(*out.mutable_string_value(), json.String());
      return absl::OkStatus();
    }
    case JsonValue::Kind::kArray: {
      auto& items = *out.mutable_list_value()->mutable_values();
      return json.ForEachItem(
          [&](int64_t, JsonValue& item) { return ToValue(item, *items.Add()); });
    }
    case JsonValue::Kind::kObject: {
      auto& fields = *out.mutable_struct_value()->mutable_fields();
      return json.ForEachField([&](absl::string_view key, JsonValue& value) {
        Value& slot = fields[std::string(key)];
        slot.Clear();  // a repeated key: the last one wins
        return ToValue(value, slot);
      });
    }
  }
  return json.Error("unreadable value");
}

}  // namespace

absl::StatusOr<Value> ParseJson(absl::string_view text) {
  Value value;
  MROPE_RETURN_IF_ERROR(ReadJson(text, [&](JsonValue& root) { return ToValue(root, value); }));
  return value;
}

absl::StatusOr<Value> ReadJsonFile(const std::string& path) {
  MROPE_ASSIGN_OR_RETURN(const std::string text, ReadFileToString(path));
  Value value;
  const absl::Status status =
      ReadJson(text, [&](JsonValue& root) { return ToValue(root, value); });
  if (!status.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", status.message()));
  return value;
}

const Value* FindField(const Value& object, absl::string_view key) {
  if (object.kind_case() != Value::kStructValue) return nullptr;
  const auto& fields = object.struct_value().fields();
  const auto it = fields.find(std::string(key));
  if (it == fields.end() || it->second.kind_case() == Value::kNullValue) return nullptr;
  return &it->second;
}

absl::StatusOr<const Value*> GetField(const Value& object, absl::string_view key,
                                      absl::string_view path) {
  if (object.kind_case() != Value::kStructValue) return TypeError(object, path, "object");
  const Value* field = FindField(object, key);
  if (field == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": missing required field '", key, "'"));
  }
  return field;
}

absl::StatusOr<int64_t> AsInt64(const Value& value, absl::string_view path) {
  if (value.kind_case() != Value::kNumberValue) return TypeError(value, path, "integer");
  const double x = value.number_value();
  if (!std::isfinite(x) || x != std::trunc(x) || std::fabs(x) > kMaxExactInteger) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": expected an integer (|x| <= 2^53), got ", x));
  }
  return static_cast<int64_t>(x);
}

absl::StatusOr<double> AsDouble(const Value& value, absl::string_view path) {
  if (value.kind_case() != Value::kNumberValue) return TypeError(value, path, "number");
  return value.number_value();
}

absl::StatusOr<bool> AsBool(const Value& value, absl::string_view path) {
  if (value.kind_case() != Value::kBoolValue) return TypeError(value, path, "bool");
  return value.bool_value();
}

absl::StatusOr<std::string> AsString(const Value& value, absl::string_view path) {
  if (value.kind_case() != Value::kStringValue) return TypeError(value, path, "string");
  return value.string_value();
}

absl::StatusOr<std::vector<int64_t>> AsInt64Array(const Value& value, absl::string_view path,
                                                  std::vector<int64_t>* shape) {
  std::vector<int64_t> out;
  std::vector<int64_t> dims;
  bool rank_fixed = false;
  if (value.kind_case() != Value::kListValue) return TypeError(value, path, "array");
  MROPE_RETURN_IF_ERROR(WalkNested(
      value, std::string(path), 0, dims, rank_fixed, [&](const Value& leaf, const std::string& at) {
        MROPE_ASSIGN_OR_RETURN(int64_t x, AsInt64(leaf, at));
        out.push_back(x);
        return absl::OkStatus();
      }));
  if (shape != nullptr) *shape = std::move(dims);
  return out;
}

absl::StatusOr<std::vector<float>> AsFloatArray(const Value& value, absl::string_view path,
                                                std::vector<int64_t>* shape) {
  std::vector<float> out;
  std::vector<int64_t> dims;
  bool rank_fixed = false;
  if (value.kind_case() != Value::kListValue) return TypeError(value, path, "array");
  MROPE_RETURN_IF_ERROR(WalkNested(
      value, std::string(path), 0, dims, rank_fixed, [&](const Value& leaf, const std::string& at) {
        MROPE_ASSIGN_OR_RETURN(double x, AsDouble(leaf, at));
        out.push_back(static_cast<float>(x));
        return absl::OkStatus();
      }));
  if (shape != nullptr) *shape = std::move(dims);
  return out;
}

}  // namespace mrope
