#include "mrope/cli/rotary_command.h"

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "mrope/common/json.h"
#include "mrope/common/json_writer.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/apply.h"
#include "mrope/rotary/rope_config.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/rotary_spec.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;

// A rotary case's inputs: positions [3][B][T], q [B][H][T][D], k [B][Hk][T][D].
struct RotaryInputs {
  int64_t batch = 0;
  int64_t tokens = 0;
  std::vector<int64_t> positions;
  std::vector<float> q;
  std::vector<float> k;
  std::vector<int64_t> q_shape;
  std::vector<int64_t> k_shape;
};

absl::Status ShapeError(absl::string_view name, absl::string_view want,
                        const std::vector<int64_t>& shape) {
  return absl::InvalidArgumentError(absl::StrCat("inputs.", name, ": expected shape ", want,
                                                 ", got [", absl::StrJoin(shape, ", "), "]"));
}

absl::StatusOr<RotaryInputs> ReadInputs(const Value& inputs, int64_t head_dim) {
  RotaryInputs in;
  std::vector<int64_t> pos_shape;
  MROPE_ASSIGN_OR_RETURN(const Value* pos, GetField(inputs, "position_ids", "inputs"));
  MROPE_ASSIGN_OR_RETURN(in.positions, AsInt64Array(*pos, "inputs.position_ids", &pos_shape));
  if (pos_shape.size() != 3 || pos_shape[0] != kNumAxes) {
    return ShapeError("position_ids", "[3][B][T]", pos_shape);
  }
  in.batch = pos_shape[1];
  in.tokens = pos_shape[2];
  const std::string want =
      absl::StrCat("[", in.batch, "][heads][", in.tokens, "][head_dim = ", head_dim, "]");
  for (auto [name, data, shape] :
       {std::make_tuple("q", &in.q, &in.q_shape), std::make_tuple("k", &in.k, &in.k_shape)}) {
    MROPE_ASSIGN_OR_RETURN(const Value* value, GetField(inputs, name, "inputs"));
    MROPE_ASSIGN_OR_RETURN(*data, AsFloatArray(*value, absl::StrCat("inputs.", name), shape));
    if (shape->size() != 4 || (*shape)[0] != in.batch || (*shape)[2] != in.tokens ||
        (*shape)[3] != head_dim) {
      return ShapeError(name, want, *shape);
    }
  }
  return in;
}

// Positions of batch row b as a [3][T] view; with `axis` >= 0, that axis's row on all three.
PositionsView BatchPositions(const RotaryInputs& in, int64_t b, int axis = -1) {
  PositionsView view;
  view.is_int64 = true;
  view.num_tokens = in.tokens;
  if (axis < 0) {
    view.data = in.positions.data() + b * in.tokens;
    view.axis_stride = in.batch * in.tokens;
  } else {
    view.data = in.positions.data() + (axis * in.batch + b) * in.tokens;
    view.axis_stride = 0;
  }
  return view;
}

// Batch row b of a [B][H][T][D] tensor as a [T][H][D] view.
HeadsView BatchHeads(std::vector<float>& x, const std::vector<int64_t>& shape, int64_t b) {
  HeadsView view;
  view.data = x.data() + b * shape[1] * shape[2] * shape[3];
  view.dtype = DType::kFloat32;
  view.num_tokens = shape[2];
  view.num_heads = static_cast<int32_t>(shape[1]);
  view.head_dim = static_cast<int32_t>(shape[3]);
  view.token_stride = shape[3];
  view.head_stride = shape[2] * shape[3];
  return view;
}

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

}  // namespace

absl::Status RunRotaryGolden(const std::string& case_path, std::ostream& out) {
  MROPE_ASSIGN_OR_RETURN(Value doc, ReadJsonFile(case_path));
  MROPE_ASSIGN_OR_RETURN(const Value* config, GetField(doc, "config", case_path));
  MROPE_ASSIGN_OR_RETURN(RopeParameters params, ParseRopeParameters(*config));
  MROPE_ASSIGN_OR_RETURN(const Value* inputs_value, GetField(doc, "inputs", case_path));
  MROPE_ASSIGN_OR_RETURN(RotaryInputs in, ReadInputs(*inputs_value, params.head_dim));
  const int64_t seq_len =
      in.positions.empty() ? 0 : *std::max_element(in.positions.begin(), in.positions.end()) + 1;
  MROPE_ASSIGN_OR_RETURN(RotarySpec spec, BuildRotarySpec(params, RotaryLayout::kNeox, seq_len));

  const bool per_axis = !params.mrope_section.empty() && !params.mrope_interleaved;
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
