#include "mrope/service/case_model.h"

#include <string>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "mrope/common/json.h"
#include "mrope/common/status_macros.h"
#include "mrope/service/preset_overrides.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;

// The `config` keys of tests/golden that describe where a case came from, not the model mrope
// builds: the checkpoint, the processor's patch_size / temporal_patch_size and its default
// position_id_per_seconds (Qwen3-Omni), the id HF writes into padding slots (pad_token_id), the
// dtype of HF's positions (position_dtype, Qwen3-Omni: the family decides it), and the
// checkpoint's text config values that the cases' rope does not read (PresetModelSpecWithOverrides
// refuses such overrides): hidden_size and num_attention_heads beside head_dim, and
// max_position_embeddings under the default rope type. A case whose rope did read one would fail
// to load (the rope types that read it require it), not load as another model.
constexpr absl::string_view kProvenanceKeys[] = {
    "checkpoint",     "patch_size",  "temporal_patch_size", "processor_position_id_per_seconds",
    "pad_token_id",   "position_dtype", "hidden_size",      "num_attention_heads",
    "max_position_embeddings",
};

}  // namespace

absl::StatusOr<CaseModel> CaseModelOf(const Value& doc) {
  CaseModel out;
  MROPE_ASSIGN_OR_RETURN(const Value* model, GetField(doc, "model", "case"));
  MROPE_ASSIGN_OR_RETURN(out.preset, AsString(*model, "model"));
  if (const Value* convention = FindField(doc, "convention")) {
    MROPE_ASSIGN_OR_RETURN(const std::string value, AsString(*convention, "convention"));
    const std::string suffix = absl::StrCat("_", value);
    if (absl::StartsWith(value, "vllm_") && absl::EndsWith(out.preset, suffix)) {
      out.preset = absl::StrCat(out.preset.substr(0, out.preset.size() - suffix.size()), "_vllm");
    }
  }
  auto& overrides = *out.overrides.mutable_struct_value()->mutable_fields();
  if (const Value* config = FindField(doc, "config")) {
    if (config->kind_case() != Value::kStructValue) {
      return absl::InvalidArgumentError("config: expected an object");
    }
    for (const auto& [key, value] : config->struct_value().fields()) {
      if (!absl::c_linear_search(kProvenanceKeys, key)) overrides[key] = value;
    }
  }
  return out;
}

absl::StatusOr<ModelSpec> ModelSpecFromCase(const Value& doc) {
  MROPE_ASSIGN_OR_RETURN(const CaseModel model, CaseModelOf(doc));
  return PresetModelSpecWithOverrides(model.preset, model.overrides, "config");
}

}  // namespace mrope
