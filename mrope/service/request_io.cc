#include "mrope/service/request_io.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "mrope/common/json.h"
#include "mrope/common/status_macros.h"
#include "mrope/service/textproto.h"

namespace mrope {
namespace {

using ::google::protobuf::ListValue;
using ::google::protobuf::Struct;
using ::google::protobuf::Value;

constexpr absl::string_view kGoldenMetadataKeys[] = {
    "format", "kind",    "model",  "case",   "tags",        "layout",
    "batch_size", "seq_len", "source", "config", "inputs_from", "outputs"};

void RemoveNulls(Struct& object) {
  auto& fields = *object.mutable_fields();
  for (auto it = fields.begin(); it != fields.end();) {
    if (it->second.kind_case() == Value::kNullValue) {
      it = fields.erase(it);
    } else {
      ++it;
    }
  }
}

// [[a, b, c], ...] -> [{"ids": [a, b, c]}, ...]
void RowsToTokenRows(Value& value) {
  if (value.kind_case() != Value::kListValue) return;
  for (Value& row : *value.mutable_list_value()->mutable_values()) {
    if (row.kind_case() != Value::kListValue) continue;
    Value wrapped;
    *(*wrapped.mutable_struct_value()->mutable_fields())["ids"].mutable_list_value() =
        row.list_value();
    row = std::move(wrapped);
  }
}

// [t, h, w] -> {"t": t, "h": h, "w": w}
absl::Status TripleToGrid(Value& value, absl::string_view path) {
  if (value.kind_case() != Value::kListValue) return absl::OkStatus();
  const ListValue& list = value.list_value();
  if (list.values_size() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": expected [t, h, w], got ", list.values_size(), " numbers"));
  }
  Value grid;
  auto& fields = *grid.mutable_struct_value()->mutable_fields();
  fields["t"] = list.values(0);
  fields["h"] = list.values(1);
  fields["w"] = list.values(2);
  value = std::move(grid);
  return absl::OkStatus();
}

absl::Status NormalizeInputs(Value& inputs) {
  if (inputs.kind_case() != Value::kStructValue) return absl::OkStatus();
  Struct& object = *inputs.mutable_struct_value();
  RemoveNulls(object);
  auto& fields = *object.mutable_fields();
  for (const char* key : {"input_ids", "attention_mask"}) {
    if (auto it = fields.find(key); it != fields.end()) RowsToTokenRows(it->second);
  }
  for (const char* key : {"image_grid_thw", "video_grid_thw"}) {
    auto it = fields.find(key);
    if (it == fields.end() || it->second.kind_case() != Value::kListValue) continue;
    auto& grids = *it->second.mutable_list_value()->mutable_values();
    for (int i = 0; i < grids.size(); ++i) {
      MROPE_RETURN_IF_ERROR(TripleToGrid(grids[i], absl::StrCat("inputs.", key, "[", i, "]")));
    }
  }
  return absl::OkStatus();
}

absl::Status NormalizeSequences(Value& sequences) {
  if (sequences.kind_case() != Value::kListValue) return absl::OkStatus();
  auto& list = *sequences.mutable_list_value()->mutable_values();
  for (int i = 0; i < list.size(); ++i) {
    if (list[i].kind_case() != Value::kStructValue) continue;
    auto& seq_fields = *list[i].mutable_struct_value()->mutable_fields();
    auto spans = seq_fields.find("spans");
    if (spans == seq_fields.end() || spans->second.kind_case() != Value::kListValue) continue;
    auto& span_list = *spans->second.mutable_list_value()->mutable_values();
    for (int j = 0; j < span_list.size(); ++j) {
      if (span_list[j].kind_case() != Value::kStructValue) continue;
      auto& span_fields = *span_list[j].mutable_struct_value()->mutable_fields();
      if (auto grid = span_fields.find("grid"); grid != span_fields.end()) {
        MROPE_RETURN_IF_ERROR(TripleToGrid(
            grid->second, absl::StrCat("sequences[", i, "].spans[", j, "].grid")));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PositionRequest> PositionRequestFromJson(absl::string_view json) {
  MROPE_ASSIGN_OR_RETURN(Value doc, ParseJson(json));
  if (doc.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError("request: expected a JSON object");
  }
  Struct& root = *doc.mutable_struct_value();
  for (absl::string_view key : kGoldenMetadataKeys) root.mutable_fields()->erase(std::string(key));
  RemoveNulls(root);
  auto& fields = *root.mutable_fields();
  if (auto it = fields.find("inputs"); it != fields.end()) {
    MROPE_RETURN_IF_ERROR(NormalizeInputs(it->second));
  }
  if (auto it = fields.find("sequences"); it != fields.end()) {
    MROPE_RETURN_IF_ERROR(NormalizeSequences(it->second));
  }
  std::string normalized;
  const auto printed = google::protobuf::util::MessageToJsonString(doc, &normalized);
  if (!printed.ok()) {
    return absl::InternalError(absl::StrCat("request: ", std::string(printed.message())));
  }
  PositionRequest request;
  const auto parsed = google::protobuf::util::JsonStringToMessage(normalized, &request);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("request: ", std::string(parsed.message())));
  }
  return request;
}

absl::StatusOr<PositionRequest> PositionRequestFromTextproto(absl::string_view text) {
  PositionRequest request;
  MROPE_RETURN_IF_ERROR(ParseTextproto(text, "request", request));
  return request;
}

absl::StatusOr<PositionRequest> ReadPositionRequest(const std::string& path) {
  MROPE_ASSIGN_OR_RETURN(const std::string text, ReadFileToString(path));
  absl::StatusOr<PositionRequest> request;
  if (absl::EndsWith(path, ".json")) {
    request = PositionRequestFromJson(text);
  } else if (IsTextprotoPath(path)) {
    request = PositionRequestFromTextproto(text);
  } else {
    const absl::string_view content = absl::StripLeadingAsciiWhitespace(text);
    request = absl::StartsWith(content, "{") ? PositionRequestFromJson(text)
                                             : PositionRequestFromTextproto(text);
  }
  if (!request.ok()) {
    return absl::Status(request.status().code(),
                        absl::StrCat(path == "-" ? "stdin" : path, ": ", request.status().message()));
  }
  return request;
}

}  // namespace mrope
