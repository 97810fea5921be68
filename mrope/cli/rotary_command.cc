#include "mrope/cli/rotary_command.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "kernels/fused_reference_case.h"
#include "mrope/common/json.h"
#include "mrope/common/json_writer.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/apply.h"
#include "mrope/rotary/attention_case.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/rotary_case.h"
#include "mrope/rotary/rotary_spec.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;

// Appends the [T][rotary_dim] cos and sin of `positions` (value d is pair d % (rotary_dim / 2)).
absl::Status AppendCosSin(const RotarySpec& spec, const PositionsView& positions,
                          std::vector<float>& cos, std::vector<float>& sin) {
  MROPE_ASSIGN_OR_RETURN(std::vector<CosSin> rows, ComputeCosSin(spec, positions));
  const int half = spec.rotary_dim / 2;
  for (int64_t t = 0; t < positions.num_tokens; ++t) {
    for (int d = 0; d < spec.rotary_dim; ++d) {
      cos.push_back(rows[t * half + d % half].cos);
      sin.push_back(rows[t * half + d % half].sin);
    }
  }
  return absl::OkStatus();
}

void AppendField(absl::string_view key, const std::vector<float>& values,
                 const std::vector<int64_t>& shape, std::string& json) {
  if (json.size() > 1) json.push_back(',');
  AppendJsonKey(key, json);
  AppendJsonArray<float>(values, shape, json);
}

// An attention-input case: the fused chain's q_out and k_out.
absl::Status RunAttentionGolden(const Value& doc, std::ostream& out) {
  MROPE_ASSIGN_OR_RETURN(const AttentionCase in, ParseAttentionCase(doc));
  MROPE_ASSIGN_OR_RETURN(const FusedCaseOutput chain, RunFusedReference(in));
  const int64_t d = in.spec.head_dim;
  std::string json = "{";
  AppendField("q_out", chain.q_out, {in.tokens, in.q_heads, d}, json);
  AppendField("k_out", chain.k_out, {in.tokens, in.k_heads, d}, json);
  json += "}\n";
  out << json;
  if (!out) return absl::UnknownError("failed to write the rotary output");
  return absl::OkStatus();
}

}  // namespace

absl::Status RunRotaryGolden(const std::string& case_path, std::ostream& out) {
  MROPE_ASSIGN_OR_RETURN(Value doc, ReadJsonFile(case_path));
  if (IsAttentionCase(doc)) return RunAttentionGolden(doc, out);
  MROPE_ASSIGN_OR_RETURN(RotaryCase in, ParseRotaryCase(doc));
  MROPE_ASSIGN_OR_RETURN(RotarySpec spec,
                         BuildRotarySpec(in.params, in.layout, SequenceLength(in)));

  const bool per_axis = !in.params.mrope_section.empty() && !in.params.mrope_interleaved;
  std::vector<float> cos, sin;
  std::vector<int64_t> cos_shape = {in.batch, in.tokens, spec.rotary_dim};
  if (per_axis) {
    cos_shape.insert(cos_shape.begin(), kNumAxes);
    for (int axis = 0; axis < kNumAxes; ++axis) {
      for (int64_t b = 0; b < in.batch; ++b) {
        MROPE_RETURN_IF_ERROR(AppendCosSin(spec, BatchPositions(in, b, axis), cos, sin));
      }
    }
  } else {
    for (int64_t b = 0; b < in.batch; ++b) {
      MROPE_RETURN_IF_ERROR(AppendCosSin(spec, BatchPositions(in, b), cos, sin));
    }
  }
  for (int64_t b = 0; b < in.batch; ++b) {
    MROPE_RETURN_IF_ERROR(ApplyMropeReference(spec, BatchPositions(in, b),
                                              BatchHeads(in.q, in.q_shape, b),
                                              BatchHeads(in.k, in.k_shape, b)));
  }

  std::string json = "{";
  AppendField("cos", cos, cos_shape, json);
  AppendField("sin", sin, cos_shape, json);
  AppendField("q_rot", in.q, in.q_shape, json);
  AppendField("k_rot", in.k, in.k_shape, json);
  json += "}\n";
  out << json;
  if (!out) return absl::UnknownError("failed to write the rotary output");
  return absl::OkStatus();
}

}  // namespace mrope
