// Fuzz target: JSON position requests in the golden-case format (mrope/positions/golden_case.h,
// what `mrope positions --golden` reads), through mrope/common/json.h.
//
// The input is JSON text. Properties checked:
//   * AsInt64Array / AsFloatArray on the document: when they succeed, the shape they report is
//     rectangular (its product is the number of values);
//   * a request that parses and plans produces output JSON that parses again, with
//     position_ids of shape [3][B][L] and one delta per row.

#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "fuzz/fuzz_input.h"
#include "mrope/common/json.h"
#include "mrope/positions/golden_case.h"

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

void CheckOutput(const PositionCase& request, const std::string& json) {
  auto out = ParseJson(json);
  FUZZ_CHECK(out.ok(), absl::StrCat("output is not JSON: ", out.status().ToString()));
  const Value* ids = FindField(*out, "position_ids");
  FUZZ_CHECK(ids != nullptr, "output has no position_ids");
  std::vector<int64_t> shape;
  auto values = AsFloatArray(*ids, "position_ids", &shape);
  FUZZ_CHECK(values.ok(), values.status().ToString());
  const std::vector<int64_t> expected = {3, request.batch.batch_size, request.batch.seq_len};
  FUZZ_CHECK(shape == expected, absl::StrCat("position_ids shape [", absl::StrJoin(shape, ", "),
                                             "]"));
  const Value* deltas = FindField(*out, "mrope_position_deltas");
  FUZZ_CHECK(deltas != nullptr, "output has no mrope_position_deltas");
  auto delta_values = AsFloatArray(*deltas, "mrope_position_deltas");
  FUZZ_CHECK(delta_values.ok() && static_cast<int64_t>(delta_values->size()) ==
                                      request.batch.batch_size,
             "one delta per row");
}

}  // namespace
}  // namespace fuzz
}  // namespace mrope

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ::mrope;
  fuzz::FuzzInput in(data, size);
  auto doc = ParseJson(in.Rest());
  if (!doc.ok()) return 0;
  fuzz::CheckArrays(*doc, 0);
  auto request = PositionCaseFromJson(*doc);
  if (!request.ok()) return 0;
  auto json = PositionsOutputJson(request->config, request->batch);
  if (json.ok()) fuzz::CheckOutput(*request, *json);
  return 0;
}
