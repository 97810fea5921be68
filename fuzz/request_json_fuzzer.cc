// Fuzz target: golden case files, read as `mrope positions --golden` reads them: the model of
// mrope/service/case_model.h from the document (mrope/common/json.h), the text as a
// PositionRequest (mrope/service/request_io.h), Handle(), and the response JSON.
//
// The input is JSON text. Properties checked:
//   * AsInt64Array / AsFloatArray on the document: when they succeed, the shape they report is
//     rectangular (its product is the number of values);
//   * a case that is answered produces output JSON that parses again, with position_ids of
//     shape [3][B][L] and one delta per row.

#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "fuzz/fuzz_input.h"
#include "mrope/common/json.h"
#include "mrope/service/case_model.h"
#include "mrope/service/position_service.h"
#include "mrope/service/request_io.h"
#include "mrope/service/response_json.h"

namespace mrope {
namespace fuzz {
namespace {

using ::google::protobuf::Value;

template <typename T>
void CheckRectangular(const absl::StatusOr<std::vector<T>>& values,
                      const std::vector<int64_t>& shape) {
  if (!values.ok()) return;
  const int64_t product =
      std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
  FUZZ_CHECK(product == static_cast<int64_t>(values->size()),
             absl::StrCat("shape [", absl::StrJoin(shape, ", "), "] for ", values->size(),
                          " values"));
}

// Every array value of the document, at any depth, read as a nested array.
void CheckArrays(const Value& value, int depth) {
  if (depth > 8) return;
  if (value.kind_case() == Value::kListValue) {
    std::vector<int64_t> shape;
    CheckRectangular(AsInt64Array(value, "v", &shape), shape);
    CheckRectangular(AsFloatArray(value, "v", &shape), shape);
    for (const Value& item : value.list_value().values()) CheckArrays(item, depth + 1);
  } else if (value.kind_case() == Value::kStructValue) {
    for (const auto& field : value.struct_value().fields()) CheckArrays(field.second, depth + 1);
  }
}

void CheckOutput(const v1::PositionRequest& request, const std::string& json) {
  auto out = ParseJson(json);
  FUZZ_CHECK(out.ok(), absl::StrCat("output is not JSON: ", out.status().ToString()));
  const Value* ids = FindField(*out, "position_ids");
  FUZZ_CHECK(ids != nullptr, "output has no position_ids");
  std::vector<int64_t> shape;
  auto values = AsFloatArray(*ids, "position_ids", &shape);
  FUZZ_CHECK(values.ok(), values.status().ToString());
  // A vLLM request is one unpadded row.
  const int64_t rows = request.has_vllm() ? 1 : request.inputs().input_ids_size();
  const int64_t columns = request.has_vllm()   ? request.vllm().input_tokens_size()
                          : rows > 0 ? request.inputs().input_ids(0).ids_size()
                                     : 0;
  const std::vector<int64_t> expected = {3, rows, columns};
  FUZZ_CHECK(shape == expected, absl::StrCat("position_ids shape [", absl::StrJoin(shape, ", "),
                                             "]"));
  const Value* deltas = FindField(*out, "mrope_position_deltas");
  FUZZ_CHECK(deltas != nullptr, "output has no mrope_position_deltas");
  auto delta_values = AsFloatArray(*deltas, "mrope_position_deltas");
  FUZZ_CHECK(delta_values.ok() && static_cast<int64_t>(delta_values->size()) == rows,
             "one delta per row");
}

}  // namespace
}  // namespace fuzz
}  // namespace mrope

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ::mrope;
  fuzz::FuzzInput in(data, size);
  const std::string text(in.Rest());
  auto doc = ParseJson(text);
  if (!doc.ok()) return 0;
  fuzz::CheckArrays(*doc, 0);
  auto model = ModelSpecFromCase(*doc);
  if (!model.ok()) return 0;
  auto request = PositionRequestFromJson(text);
  if (!request.ok() || request->sequences_size() > 0) return 0;
  request->mutable_options()->set_decode_steps(3);
  auto service = PositionService::Create(*std::move(model));
  if (!service.ok()) return 0;
  auto response = service->Handle(*request);
  if (response.ok()) fuzz::CheckOutput(*request, PositionResponseToJson(*response));
  return 0;
}
