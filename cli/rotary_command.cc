#include "cli/rotary_command.h"

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
#include "mrope/model/family_rotary.h"
#include "mrope/rotary/apply.h"
#include "mrope/rotary/attention_case.h"
#include "mrope/rotary/hf_cos_sin.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/rotary_case.h"
#include "mrope/rotary/rotary_spec.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;

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
  MROPE_ASSIGN_OR_RETURN(const CosSinLayout cos_layout, UseFamilyRotary(in));
  MROPE_ASSIGN_OR_RETURN(RotarySpec spec,
                         BuildRotarySpec(in.params, in.layout, SequenceLength(in)));
  std::vector<PositionsView> rows;
  for (int64_t b = 0; b < in.batch; ++b) rows.push_back(BatchPositions(in, b));
  MROPE_ASSIGN_OR_RETURN(const HfCosSin cos_sin, ComputeHfCosSin(spec, cos_layout, rows));
  for (int64_t b = 0; b < in.batch; ++b) {
    MROPE_RETURN_IF_ERROR(ApplyMropeReference(spec, rows[b], BatchHeads(in.q, in.q_shape, b),
                                              BatchHeads(in.k, in.k_shape, b)));
  }

  std::string json = "{";
  AppendField("cos", cos_sin.cos, cos_sin.shape, json);
  AppendField("sin", cos_sin.sin, cos_sin.shape, json);
  AppendField("q_rot", in.q, in.q_shape, json);
  AppendField("k_rot", in.k, in.k_shape, json);
  json += "}\n";
  out << json;
  if (!out) return absl::UnknownError("failed to write the rotary output");
  return absl::OkStatus();
}

}  // namespace mrope
