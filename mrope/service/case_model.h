#ifndef MROPE_SERVICE_CASE_MODEL_H_
#define MROPE_SERVICE_CASE_MODEL_H_

// The model of a golden case file (tests/golden/README.md, "qwen-mrope-golden/v2"), which
// `mrope positions|explain --golden` serve. The case's prompt is a PositionRequest as it stands
// (mrope/service/request_io.h), so a case is "this model + this request".

#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/struct.pb.h"
#include "mrope/service/model_spec.h"

namespace mrope {

// A case's model as a preset and its overrides (mrope/service/preset_overrides.h).
struct CaseModel {
  // The case's `model` key; a vLLM request case (`convention` vllm_mm_features or vllm_evs)
  // names its folder, and its model is the family's vLLM preset ("qwen3_vl_vllm_evs" ->
  // "qwen3_vl_vllm").
  std::string preset;
  // The case's `config` without the keys that record the case's provenance rather than a value
  // of the model (the checkpoint, the processor's patch sizes and defaults, the padding id, the
  // reference's position dtype, the checkpoint's text config values its rope does not read:
  // tests/golden/README.md lists them); any other key is an override.
  google::protobuf::Value overrides;
};

absl::StatusOr<CaseModel> CaseModelOf(const google::protobuf::Value& doc);

// PresetModelSpecWithOverrides of CaseModelOf(doc); errors name the key
// ("config.spatial_merge_size ...").
absl::StatusOr<ModelSpec> ModelSpecFromCase(const google::protobuf::Value& doc);

}  // namespace mrope

#endif  // MROPE_SERVICE_CASE_MODEL_H_
