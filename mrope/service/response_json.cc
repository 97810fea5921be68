#include "mrope/service/response_json.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "mrope/common/json_writer.h"

namespace mrope {
namespace {

template <typename T>
absl::Span<const T> Values(const google::protobuf::RepeatedField<T>& field) {
  return absl::MakeConstSpan(field.data(), field.size());
}

void AppendArray(absl::string_view key, const v1::PositionArray& array, std::string& out) {
  if (out.size() > 1) out += ",";
  AppendJsonKey(key, out);
  const std::vector<int64_t> shape(array.shape().begin(), array.shape().end());
  if (array.int64_values_size() > 0) {
    AppendJsonArray(Values(array.int64_values()), shape, out);
  } else if (array.int32_values_size() > 0) {
    AppendJsonArray(Values(array.int32_values()), shape, out);
  } else {
    AppendJsonArray(Values(array.float_values()), shape, out);
  }
}

}  // namespace

std::string PositionResponseToJson(const v1::PositionResponse& response) {
  std::string out = "{";
  AppendArray("position_ids", response.position_ids(), out);
  AppendArray("mrope_position_deltas", response.mrope_position_deltas(), out);
  AppendArray("rope_deltas", response.rope_deltas(), out);
  if (response.has_decode_position_ids()) {
    AppendArray("decode_position_ids", response.decode_position_ids(), out);
  }
  if (response.cu_seqlens_size() > 0) {
    out += ",";
    AppendJsonKey("cu_seqlens", out);
    AppendJsonArray(Values(response.cu_seqlens()), {response.cu_seqlens_size()}, out);
  }
  if (response.cp_token_index_size() > 0) {
    out += ",";
    AppendJsonKey("cp_token_index", out);
    AppendJsonArray(Values(response.cp_token_index()), {response.cp_token_index_size()}, out);
  }
  if (response.has_cos()) {
    AppendArray("cos", response.cos(), out);
    AppendArray("sin", response.sin(), out);
  }
  out += "}";
  return out;
}

}  // namespace mrope
