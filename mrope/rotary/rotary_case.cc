#include "mrope/rotary/rotary_case.h"

#include <algorithm>
#include <cstdint>
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
#include "mrope/common/status_macros.h"
#include "mrope/rotary/hf_cos_sin.h"
#include "mrope/rotary/rope_config.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;

absl::Status ShapeError(absl::string_view name, absl::string_view want,
                        const std::vector<int64_t>& shape) {
  return absl::InvalidArgumentError(absl::StrCat("inputs.", name, ": expected shape ", want,
                                                 ", got [", absl::StrJoin(shape, ", "), "]"));
}

absl::Status ReadInputs(const Value& inputs, RotaryCase& c) {
  std::vector<int64_t> pos_shape;
  MROPE_ASSIGN_OR_RETURN(const Value* pos, GetField(inputs, "position_ids", "inputs"));
  MROPE_ASSIGN_OR_RETURN(c.positions, AsInt64Array(*pos, "inputs.position_ids", &pos_shape));
  if (pos_shape.size() != 3 || pos_shape[0] != kNumAxes) {
    return ShapeError("position_ids", "[3][B][T]", pos_shape);
  }
  c.batch = pos_shape[1];
  c.tokens = pos_shape[2];
  const int64_t head_dim = c.params.head_dim;
  const std::string want =
      absl::StrCat("[", c.batch, "][heads][", c.tokens, "][head_dim = ", head_dim, "]");
  for (auto [name, data, shape] :
       {std::make_tuple("q", &c.q, &c.q_shape), std::make_tuple("k", &c.k, &c.k_shape)}) {
    MROPE_ASSIGN_OR_RETURN(const Value* value, GetField(inputs, name, "inputs"));
    MROPE_ASSIGN_OR_RETURN(*data, AsFloatArray(*value, absl::StrCat("inputs.", name), shape));
    if (shape->size() != 4 || (*shape)[0] != c.batch || (*shape)[2] != c.tokens ||
        (*shape)[3] != head_dim) {
      return ShapeError(name, want, *shape);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RotaryCase> ParseRotaryCase(const Value& doc) {
  RotaryCase c;
  MROPE_ASSIGN_OR_RETURN(const Value* config, GetField(doc, "config", "case"));
  MROPE_ASSIGN_OR_RETURN(c.params, ParseRopeParameters(*config));
  if (const Value* rotate = FindField(*config, "rotate"); rotate != nullptr) {
    MROPE_ASSIGN_OR_RETURN(const std::string pairing, AsString(*rotate, "config.rotate"));
    if (pairing == "interleaved_pairs") {
      c.layout = RotaryLayout::kGptj;
    } else if (pairing != "half") {
      return absl::InvalidArgumentError(absl::StrCat(
          "config.rotate must be half or interleaved_pairs, got '", pairing, "'"));
    }
  }
  if (const Value* name = FindField(*config, "mrope_layout"); name != nullptr) {
    MROPE_ASSIGN_OR_RETURN(const std::string layout, AsString(*name, "config.mrope_layout"));
    absl::StatusOr<MropeLayout> parsed = MropeLayoutFromName(layout);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("config.mrope_layout: ", parsed.status().message()));
    }
    c.params.mrope_layout = *parsed;
  }
  if (const Value* name = FindField(*config, "cos_layout"); name != nullptr) {
    MROPE_ASSIGN_OR_RETURN(const std::string layout, AsString(*name, "config.cos_layout"));
    absl::StatusOr<CosSinLayout> parsed = CosSinLayoutFromName(layout);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("config.cos_layout: ", parsed.status().message()));
    }
    c.cos_layout = *parsed;
  }
  MROPE_ASSIGN_OR_RETURN(const Value* model, GetField(doc, "reference_model", "case"));
  MROPE_ASSIGN_OR_RETURN(c.reference_model, AsString(*model, "reference_model"));
  MROPE_ASSIGN_OR_RETURN(const Value* inputs, GetField(doc, "inputs", "case"));
  MROPE_RETURN_IF_ERROR(ReadInputs(*inputs, c));
  return c;
}

int64_t SequenceLength(const RotaryCase& c) {
  return c.positions.empty() ? 0 : *std::max_element(c.positions.begin(), c.positions.end()) + 1;
}

PositionsView BatchPositions(const RotaryCase& c, int64_t b, int axis) {
  PositionsView view;
  view.is_int64 = true;
  view.num_tokens = c.tokens;
  if (axis < 0) {
    view.data = c.positions.data() + b * c.tokens;
    view.axis_stride = c.batch * c.tokens;
  } else {
    view.data = c.positions.data() + (axis * c.batch + b) * c.tokens;
    view.axis_stride = 0;
  }
  return view;
}

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

}  // namespace mrope
