#include "cli/tables_command.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/output.h"
#include "mrope/common/json_writer.h"
#include "mrope/common/status_macros.h"
#include "mrope/model/model_family.h"
#include "mrope/rotary/apply.h"
#include "mrope/rotary/rope_params.h"

namespace mrope {
namespace {

constexpr const char* kAxisNames[] = {"t", "h", "w"};

// --positions: comma-separated T (all axes) or T:H:W, as planar [3][P].
absl::StatusOr<std::vector<int64_t>> ParsePositions(const std::string& text) {
  std::vector<int64_t> t, h, w;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    std::vector<absl::string_view> parts = absl::StrSplit(item, ':');
    int64_t v[3];
    bool ok = parts.size() == 1 || parts.size() == 3;
    for (size_t i = 0; ok && i < parts.size(); ++i) {
      ok = absl::SimpleAtoi(parts[i], &v[i]) && v[i] >= 0;
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--positions: '", item, "' is not T or T:H:W with non-negative integers"));
    }
    if (parts.size() == 1) v[1] = v[2] = v[0];
    t.push_back(v[0]);
    h.push_back(v[1]);
    w.push_back(v[2]);
  }
  std::vector<int64_t> planar = t;
  planar.insert(planar.end(), h.begin(), h.end());
  planar.insert(planar.end(), w.begin(), w.end());
  return planar;
}

std::string PointName(const std::vector<int64_t>& planar, int64_t p, int64_t n) {
  const int64_t t = planar[p], h = planar[n + p], w = planar[2 * n + p];
  return t == h && h == w ? absl::StrCat(t) : absl::StrCat(t, ":", h, ":", w);
}

// Appends `line` without its trailing blanks, and a newline.
void AppendLine(absl::string_view line, std::string& out) {
  absl::StrAppend(&out, absl::StripTrailingAsciiWhitespace(line), "\n");
}

std::string Text(const ModelSpec& model, const RotarySpec& spec,
                 const std::vector<int64_t>& planar, const std::vector<CosSin>& cos_sin) {
  const RopeParameters& rope = *model.rope;
  const int pairs = spec.rotary_dim / 2;
  const int64_t n = planar.size() / 3;
  std::string out = absl::StrFormat(
      "%s: head_dim %d, rotary_dim %d (%d pairs), rope_type %s, rope_theta %g, "
      "attention_scaling %g\n",
      model.name, spec.head_dim, spec.rotary_dim, pairs, RopeTypeName(rope.scaling.type),
      rope.scaling.theta, spec.attention_scaling);
  absl::StrAppend(&out, "mrope_section [", absl::StrJoin(rope.mrope_section, ", "), "] ",
                  MropeLayoutName(rope.mrope_layout),
                  "; pair j rotates with the angle inv_freq[j] * position[axis(j)]\n",
                  "q/k norm before the rotary: ",
                  QkNormName(FamilyOf(model.positions).qk_norm), "\n\n");
  std::string header = absl::StrFormat("%-5s %-5s %-15s", "pair", "axis", "inv_freq");
  for (int64_t p = 0; p < n; ++p) {
    const std::string name = PointName(planar, p, n);
    absl::StrAppend(&header, absl::StrFormat(" %-15s %-15s", absl::StrCat("cos@", name),
                                             absl::StrCat("sin@", name)));
  }
  AppendLine(header, out);
  for (int j = 0; j < pairs; ++j) {
    std::string line = absl::StrFormat("%-5d %-5s %-15.9g", j, kAxisNames[spec.axis_map.axis[j]],
                                       spec.inv_freq[j]);
    for (int64_t p = 0; p < n; ++p) {
      const CosSin cs = cos_sin[p * pairs + j];
      absl::StrAppend(&line, absl::StrFormat(" %-15.9g %-15.9g", cs.cos, cs.sin));
    }
    AppendLine(line, out);
  }
  return out;
}

std::string Json(const RotarySpec& spec, const RopeParameters& rope,
                 const std::vector<int64_t>& planar, const std::vector<CosSin>& cos_sin) {
  const int64_t pairs = spec.rotary_dim / 2;
  const int64_t n = planar.size() / 3;
  std::vector<int32_t> axes(spec.axis_map.axis, spec.axis_map.axis + pairs);
  std::vector<int64_t> points;  // [P][3]
  for (int64_t p = 0; p < n; ++p) {
    for (int axis = 0; axis < 3; ++axis) points.push_back(planar[axis * n + p]);
  }
  std::vector<float> cos, sin;
  for (const CosSin& cs : cos_sin) {
    cos.push_back(cs.cos);
    sin.push_back(cs.sin);
  }
  std::string out = "{";
  absl::StrAppend(&out, "\"head_dim\":", spec.head_dim, ",\"rotary_dim\":", spec.rotary_dim,
                  ",\"rope_type\":\"", RopeTypeName(rope.scaling.type), "\",\"rope_theta\":",
                  rope.scaling.theta, ",\"attention_scaling\":");
  AppendJsonNumber(spec.attention_scaling, out);
  absl::StrAppend(&out, ",\"mrope_section\":[", absl::StrJoin(rope.mrope_section, ","),
                  "],\"mrope_layout\":\"", MropeLayoutName(rope.mrope_layout), "\",");
  AppendJsonKey("inv_freq", out);
  AppendJsonArray<float>(spec.inv_freq, {pairs}, out);
  out += ",";
  AppendJsonKey("axis_map", out);
  AppendJsonArray<int32_t>(axes, {pairs}, out);
  out += ",";
  AppendJsonKey("positions", out);
  AppendJsonArray<int64_t>(points, {n, 3}, out);
  out += ",";
  AppendJsonKey("cos", out);
  AppendJsonArray<float>(cos, {n, pairs}, out);
  out += ",";
  AppendJsonKey("sin", out);
  AppendJsonArray<float>(sin, {n, pairs}, out);
  out += "}\n";
  return out;
}

}  // namespace

absl::Status RunTables(const CliOptions& options, std::ostream& out) {
  const std::string format = options.format.empty() ? "text" : options.format;
  if (format != "text" && format != "json") {
    return absl::InvalidArgumentError(
        absl::StrCat("--format must be text or json, got '", format, "'"));
  }
  MROPE_ASSIGN_OR_RETURN(const ModelSpec model, LoadCliModel(options));
  if (!model.rope.has_value()) return SingleRope(model).status();
  MROPE_ASSIGN_OR_RETURN(const std::vector<int64_t> planar, ParsePositions(options.positions));
  const int64_t seq_len =
      options.seq_len > 0 ? options.seq_len : *std::max_element(planar.begin(), planar.end()) + 1;
  MROPE_ASSIGN_OR_RETURN(const RotarySpec spec,
                         BuildRotarySpec(*model.rope, RotaryLayoutOf(model), seq_len));
  PositionsView view;
  view.data = planar.data();
  view.is_int64 = true;
  view.num_tokens = planar.size() / 3;
  view.axis_stride = view.num_tokens;
  MROPE_ASSIGN_OR_RETURN(const std::vector<CosSin> cos_sin, ComputeCosSin(spec, view));
  return WriteOutput(options.output,
                     format == "json" ? Json(spec, *model.rope, planar, cos_sin)
                                      : Text(model, spec, planar, cos_sin),
                     out);
}

}  // namespace mrope
