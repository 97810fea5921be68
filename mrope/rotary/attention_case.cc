#include "mrope/rotary/attention_case.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/struct.pb.h"
#include "mrope/common/json.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/axis_map.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/rope_scaling.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;

// The float array at `object`.`key` with exactly `want` as its shape.
absl::StatusOr<std::vector<float>> ReadArray(const Value& object, const char* object_name,
                                             const char* key, const std::vector<int64_t>& want) {
  const std::string path = absl::StrCat(object_name, ".", key);
  MROPE_ASSIGN_OR_RETURN(const Value* value, GetField(object, key, object_name));
  std::vector<int64_t> shape;
  MROPE_ASSIGN_OR_RETURN(std::vector<float> values, AsFloatArray(*value, path, &shape));
  if (shape != want) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": expected shape [",
                                                   absl::StrJoin(want, ", "), "], got [",
                                                   absl::StrJoin(shape, ", "), "]"));
  }
  return values;
}

absl::StatusOr<int64_t> ConfigInt(const Value& config, const char* key) {
  MROPE_ASSIGN_OR_RETURN(const Value* value, GetField(config, key, "config"));
  return AsInt64(*value, absl::StrCat("config.", key));
}

}  // namespace

bool IsAttentionCase(const Value& doc) {
  const Value* kind = FindField(doc, "kind");
  return kind != nullptr && kind->string_value() == "attention_input";
}

absl::StatusOr<AttentionCase> ParseAttentionCase(const Value& doc) {
  if (!IsAttentionCase(doc)) {
    return absl::InvalidArgumentError("kind: expected \"attention_input\"");
  }
  AttentionCase c;
  MROPE_ASSIGN_OR_RETURN(const Value* model, GetField(doc, "model", "case"));
  MROPE_ASSIGN_OR_RETURN(c.model, AsString(*model, "model"));
  MROPE_ASSIGN_OR_RETURN(const Value* dtype, GetField(doc, "dtype", "case"));
  MROPE_ASSIGN_OR_RETURN(const std::string dtype_name, AsString(*dtype, "dtype"));
  if (dtype_name == "bfloat16") {
    c.dtype = DType::kBFloat16;
  } else if (dtype_name != "float32") {
    return absl::InvalidArgumentError(
        absl::StrCat("dtype: expected bfloat16 or float32, got '", dtype_name, "'"));
  }

  MROPE_ASSIGN_OR_RETURN(const Value* config, GetField(doc, "config", "case"));
  MROPE_ASSIGN_OR_RETURN(const Value* variant, GetField(*config, "norm_variant", "config"));
  MROPE_ASSIGN_OR_RETURN(const std::string norm, AsString(*variant, "config.norm_variant"));
  if (norm == "one_plus_weight") {
    c.norm = QkNormForm::kOnePlusWeight;
  } else if (norm != "weight") {
    return absl::InvalidArgumentError(absl::StrCat(
        "config.norm_variant: expected weight or one_plus_weight, got '", norm, "'"));
  }
  MROPE_ASSIGN_OR_RETURN(const Value* eps, GetField(*config, "rms_norm_eps", "config"));
  MROPE_ASSIGN_OR_RETURN(const double eps_value, AsDouble(*eps, "config.rms_norm_eps"));
  c.eps = static_cast<float>(eps_value);
  MROPE_ASSIGN_OR_RETURN(const int64_t head_dim, ConfigInt(*config, "head_dim"));
  MROPE_ASSIGN_OR_RETURN(const int64_t q_heads, ConfigInt(*config, "num_heads"));
  MROPE_ASSIGN_OR_RETURN(const int64_t k_heads, ConfigInt(*config, "num_kv_heads"));
  MROPE_ASSIGN_OR_RETURN(const int64_t rotary_dim, ConfigInt(*config, "rotary_dim"));
  MROPE_ASSIGN_OR_RETURN(const Value* theta, GetField(*config, "rope_theta", "config"));
  MROPE_ASSIGN_OR_RETURN(const double theta_value, AsDouble(*theta, "config.rope_theta"));
  MROPE_ASSIGN_OR_RETURN(const Value* sections, GetField(*config, "mrope_section", "config"));
  MROPE_ASSIGN_OR_RETURN(const std::vector<int64_t> section,
                         AsInt64Array(*sections, "config.mrope_section"));
  if (head_dim < 2 || head_dim > kMaxHeadDim || q_heads < 1 || k_heads < 1 ||
      q_heads > 4096 || k_heads > 4096) {
    return absl::InvalidArgumentError(absl::StrCat("config: head_dim=", head_dim, ", num_heads=",
                                                   q_heads, ", num_kv_heads=", k_heads,
                                                   " out of range"));
  }
  c.q_heads = static_cast<int32_t>(q_heads);
  c.k_heads = static_cast<int32_t>(k_heads);

  // The library's inv_freq for the case's rope (default type, partial rotary).
  RopeParameters params;
  params.head_dim = static_cast<int32_t>(head_dim);
  params.scaling.type = RopeType::kDefault;
  params.scaling.rotary_dim = static_cast<int32_t>(rotary_dim);
  params.scaling.theta = theta_value;
  params.mrope_section.assign(section.begin(), section.end());
  params.mrope_layout = MropeLayout::kInterleaved;
  MROPE_ASSIGN_OR_RETURN(c.spec, BuildRotarySpec(params, RotaryLayout::kNeox, /*seq_len=*/1));

  MROPE_ASSIGN_OR_RETURN(const Value* inputs, GetField(doc, "inputs", "case"));
  MROPE_ASSIGN_OR_RETURN(const Value* positions, GetField(*inputs, "position_ids", "inputs"));
  std::vector<int64_t> position_shape;
  MROPE_ASSIGN_OR_RETURN(c.positions,
                         AsInt64Array(*positions, "inputs.position_ids", &position_shape));
  if (position_shape.size() != 2 || position_shape[0] != kNumAxes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inputs.position_ids: expected shape [3][T], got [", absl::StrJoin(position_shape, ", "),
        "]"));
  }
  c.tokens = position_shape[1];
  MROPE_ASSIGN_OR_RETURN(c.q_pre, ReadArray(*inputs, "inputs", "q_pre", {c.tokens, q_heads, head_dim}));
  MROPE_ASSIGN_OR_RETURN(c.k_pre, ReadArray(*inputs, "inputs", "k_pre", {c.tokens, k_heads, head_dim}));
  MROPE_ASSIGN_OR_RETURN(c.q_norm_weight, ReadArray(*inputs, "inputs", "q_norm_weight", {head_dim}));
  MROPE_ASSIGN_OR_RETURN(c.k_norm_weight, ReadArray(*inputs, "inputs", "k_norm_weight", {head_dim}));
  return c;
}

absl::StatusOr<AttentionOutputs> ParseAttentionOutputs(const Value& doc, const AttentionCase& c) {
  MROPE_ASSIGN_OR_RETURN(const Value* outputs, GetField(doc, "outputs", "case"));
  const int64_t d = c.spec.head_dim;
  const std::vector<int64_t> q_shape = {c.tokens, c.q_heads, d};
  const std::vector<int64_t> k_shape = {c.tokens, c.k_heads, d};
  AttentionOutputs o;
  MROPE_ASSIGN_OR_RETURN(o.inv_freq,
                         ReadArray(*outputs, "outputs", "inv_freq", {c.spec.rotary_dim / 2}));
  MROPE_ASSIGN_OR_RETURN(o.q_out_hf, ReadArray(*outputs, "outputs", "q_out_hf", q_shape));
  MROPE_ASSIGN_OR_RETURN(o.k_out_hf, ReadArray(*outputs, "outputs", "k_out_hf", k_shape));
  MROPE_ASSIGN_OR_RETURN(o.q_out_exact, ReadArray(*outputs, "outputs", "q_out_exact", q_shape));
  MROPE_ASSIGN_OR_RETURN(o.k_out_exact, ReadArray(*outputs, "outputs", "k_out_exact", k_shape));
  return o;
}

}  // namespace mrope
