#ifndef MROPE_ROTARY_ATTENTION_CASE_H_
#define MROPE_ROTARY_ATTENTION_CASE_H_

// An attention-input golden case (tests/golden/README.md, "Attention input cases"): a VL text
// attention's q and k before the per-head norm, the norm weights and [3][T] positions, read
// into what the fused chain (kernels/fused_reference.h) takes. `mrope rotary --golden` and the
// accuracy test read it; `outputs` are read only when asked for.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/struct.pb.h"
#include "mrope/rotary/qk_norm_math.h"
#include "mrope/rotary/rotary_spec.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {

// HF's outputs of a case, as float32 ([T][H][D] each; the exact ones rounded to float32).
struct AttentionOutputs {
  std::vector<float> inv_freq;
  std::vector<float> q_out_hf, k_out_hf;
  std::vector<float> q_out_exact, k_out_exact;
};

struct AttentionCase {
  std::string model;               // attn_qwen3_vl, attn_qwen3_5
  DType dtype = DType::kFloat32;   // the model's: bfloat16 or float32
  RotarySpec spec;                 // NeoX pairs, interleaved sections, partial rotary
  QkNormForm norm = QkNormForm::kWeight;
  float eps = 0.0f;
  int64_t tokens = 0;              // T
  int32_t q_heads = 0;             // Hq
  int32_t k_heads = 0;             // Hk
  std::vector<int64_t> positions;  // [3][T]
  // Values as float32 (in bfloat16 cases every one is a bfloat16 value).
  std::vector<float> q_pre;        // [T][Hq][D]
  std::vector<float> k_pre;        // [T][Hk][D]
  std::vector<float> q_norm_weight;  // [D]
  std::vector<float> k_norm_weight;  // [D]
};

// Reads and checks a case (`kind` attention_input, shapes consistent with the config, a known
// dtype and norm variant). inv_freq comes from the config through the library's own
// ComputeInvFreq. Errors are InvalidArgument naming the field.
absl::StatusOr<AttentionCase> ParseAttentionCase(const google::protobuf::Value& doc);

// The case's `outputs`, shapes checked against `c`.
absl::StatusOr<AttentionOutputs> ParseAttentionOutputs(const google::protobuf::Value& doc,
                                                       const AttentionCase& c);

// True for a document whose `kind` is "attention_input".
bool IsAttentionCase(const google::protobuf::Value& doc);

}  // namespace mrope

#endif  // MROPE_ROTARY_ATTENTION_CASE_H_
