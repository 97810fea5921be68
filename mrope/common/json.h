#ifndef MROPE_COMMON_JSON_H_
#define MROPE_COMMON_JSON_H_

// Reading JSON documents (golden cases, requests, HF config.json) through protobuf's own JSON
// parser into google.protobuf.Value, plus typed accessors that turn shape or type mismatches
// into absl::Status errors naming the field path.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"

namespace mrope {

// Upper bound on JSON text mrope reads (documents beyond it are refused before parsing).
// Parsing builds a google.protobuf.Value tree about 11x the text's size (measured: 28 MB of
// input_ids peak at 334 MB), so the cap bounds that memory too; 64 MiB holds ~9M token ids.
// Larger batches should use binary protos.
inline constexpr int64_t kMaxJsonBytes = int64_t{64} << 20;

// Reads a whole file ("-" reads stdin). Refuses files over kMaxJsonBytes.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// Parses JSON text. Malformed JSON gives InvalidArgument with the parser's message.
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
