#ifndef MROPE_ROTARY_ROTARY_CASE_H_
#define MROPE_ROTARY_ROTARY_CASE_H_

// A rotary golden case's model and inputs (tests/golden/README.md, "Rotary case schema"): what
// `mrope rotary --golden`, the rotary golden tests and the kernel's golden test read. `outputs`
// are not read here.
//   reference_model  the HF model_type the case was taken from
//   config           ParseRopeParameters (mrope/rotary/rope_config.h)
//   config.rotate    how the rotary dims pair: "half" (NeoX, also when absent) or
//                    "interleaved_pairs" (GPT-J pairs (2j, 2j+1), GLM-4.1V)
//   config.mrope_layout, config.cos_layout   optional (the rotary_*_v5 cases): MropeLayoutName
//                    (mrope/rotary/rope_params.h), CosSinLayoutName (mrope/rotary/hf_cos_sin.h)
//   inputs           position_ids [3][B][T] (int), q [B][H][T][D] and k [B][Hk][T][D] (float32)
// The config's layouts are what the case SAYS its module does; a model's own are its family's
// (UseFamilyRotary, mrope/model/family_rotary.h, checks that the two agree).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/struct.pb.h"
#include "mrope/rotary/hf_cos_sin.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {

struct RotaryCase {
  std::string reference_model;
  RopeParameters params;  // params.mrope_layout: config.mrope_layout, else mrope_interleaved's
  RotaryLayout layout = RotaryLayout::kNeox;
  std::optional<CosSinLayout> cos_layout;  // config.cos_layout, when given
  int64_t batch = 0;   // B
  int64_t tokens = 0;  // T
  std::vector<int64_t> positions;
  std::vector<float> q;
  std::vector<float> k;
  std::vector<int64_t> q_shape;  // {B, H, T, D}
  std::vector<int64_t> k_shape;  // {B, Hk, T, D}
};

// Reads and checks the case (shapes consistent, D = the config's head_dim). Errors are
// InvalidArgument naming the field.
absl::StatusOr<RotaryCase> ParseRotaryCase(const google::protobuf::Value& doc);

// HF's sequence length for the case: max position + 1 (0 without tokens).
int64_t SequenceLength(const RotaryCase& c);

// Batch row b's positions as a [3][T] view; with `axis` >= 0, that axis's row on all three.
PositionsView BatchPositions(const RotaryCase& c, int64_t b, int axis = -1);

// Batch row b of a [B][H][T][D] float32 tensor (q, k or a copy) as a [T][H][D] view.
HeadsView BatchHeads(std::vector<float>& x, const std::vector<int64_t>& shape, int64_t b);

}  // namespace mrope

#endif  // MROPE_ROTARY_ROTARY_CASE_H_
