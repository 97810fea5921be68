#ifndef MROPE_COMMON_JSON_H_
#define MROPE_COMMON_JSON_H_

// JSON documents as a google.protobuf.Value tree, for small documents read as a whole (HF
// config.json, rotary golden cases, tests), plus typed accessors that turn shape or type
// mismatches into absl::Status errors naming the field path. The tree is built by mrope's JSON
// reader (json_reader.h) and shares its bounds; large inputs (requests, golden position cases)
// are read with that reader directly, without a tree.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "mrope/common/json_reader.h"

namespace mrope {

// Parses JSON text (an object or an array). Malformed or too deeply nested JSON gives
// InvalidArgument naming the problem.
absl::StatusOr<google::protobuf::Value> ParseJson(absl::string_view text);

// Reads and parses a JSON file.
absl::StatusOr<google::protobuf::Value> ReadJsonFile(const std::string& path);

// Field access. `path` is only used in error messages (e.g. "inputs.image_grid_thw").
// Returns nullptr when `key` is absent; a JSON null counts as absent too.
const google::protobuf::Value* FindField(const google::protobuf::Value& object,
                                         absl::string_view key);
absl::StatusOr<const google::protobuf::Value*> GetField(const google::protobuf::Value& object,
                                                        absl::string_view key,
                                                        absl::string_view path);

// Scalars. Integers must be integral JSON numbers within int64 range (|x| <= 2^53).
absl::StatusOr<int64_t> AsInt64(const google::protobuf::Value& value, absl::string_view path);
absl::StatusOr<double> AsDouble(const google::protobuf::Value& value, absl::string_view path);
absl::StatusOr<bool> AsBool(const google::protobuf::Value& value, absl::string_view path);
absl::StatusOr<std::string> AsString(const google::protobuf::Value& value,
                                     absl::string_view path);

// Arrays: flat ([n]) and nested to any depth. `shape` receives the dimensions of a
// rectangular nested array; ragged arrays are an error.
absl::StatusOr<std::vector<int64_t>> AsInt64Array(const google::protobuf::Value& value,
                                                  absl::string_view path,
                                                  std::vector<int64_t>* shape = nullptr);
absl::StatusOr<std::vector<float>> AsFloatArray(const google::protobuf::Value& value,
                                                absl::string_view path,
                                                std::vector<int64_t>* shape = nullptr);

}  // namespace mrope

#endif  // MROPE_COMMON_JSON_H_
