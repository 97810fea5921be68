#include "mrope/rotary/axis_map.h"

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/rope_math.h"

namespace mrope {
namespace {

constexpr char kAxisNames[kNumAxes] = {'t', 'h', 'w'};

absl::Status CheckNumPairs(int num_pairs) {
  if (num_pairs < 1 || num_pairs > kMaxRotaryPairs) {
    return absl::InvalidArgumentError(absl::StrCat("number of rotary pairs must be in [1, ",
                                                   kMaxRotaryPairs, "], got ", num_pairs));
  }
  return absl::OkStatus();
}

// Entries >= 0 summing to the rotary's pairs (every layout's sections).
absl::Status CheckSectionSum(absl::Span<const int32_t> sections, int num_pairs) {
  int64_t sum = 0;
  for (int32_t s : sections) {
    if (s < 0) {
      return absl::InvalidArgumentError(absl::StrCat("mrope_section entries must be >= 0, got [",
                                                     absl::StrJoin(sections, ", "), "]"));
    }
    sum += s;
  }
  if (sum != num_pairs) {
    return absl::InvalidArgumentError(absl::StrCat("mrope_section [", absl::StrJoin(sections, ", "),
                                                   "] sums to ", sum,
                                                   ", expected rotary_dim / 2 = ", num_pairs));
  }
  return absl::OkStatus();
}

// `order` names the axes of the three entries, e.g. "[t, h, w]".
absl::Status CheckSections(absl::Span<const int32_t> sections, int num_pairs,
                           absl::string_view order = "[t, h, w]") {
  MROPE_RETURN_IF_ERROR(CheckNumPairs(num_pairs));
  if (sections.size() != kNumAxes) {
    return absl::InvalidArgumentError(absl::StrCat("mrope_section must have 3 entries ", order,
                                                   ", got [", absl::StrJoin(sections, ", "), "]"));
  }
  return CheckSectionSum(sections, num_pairs);
}

// OK when `map` gives entry i of `sections` pairs to axis axes[i], for every i; else the
// sections cannot be laid out by the `layout` rule.
absl::Status CheckRealized(const AxisMap& map, absl::string_view layout,
                           absl::Span<const int32_t> sections, std::array<int, kNumAxes> axes) {
  std::array<int, kNumAxes> counts = {0, 0, 0};
  for (int j = 0; j < map.num_pairs; ++j) ++counts[map.axis[j]];
  for (int i = 0; i < kNumAxes; ++i) {
    const int a = axes[i];
    if (counts[a] != sections[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          layout, " mrope_section [", absl::StrJoin(sections, ", "), "] cannot be laid out over ",
          map.num_pairs, " pairs: axis ", std::string(1, kAxisNames[a]), " gets ", counts[a],
          " pairs, not ", sections[i]));
    }
  }
  return absl::OkStatus();
}

// Fills a map of `num_pairs` pairs from `axis_of(pair)`.
template <typename AxisOf>
AxisMap FillAxisMap(int num_pairs, AxisOf axis_of) {
  AxisMap map;
  map.num_pairs = num_pairs;
  for (int j = 0; j < num_pairs; ++j) map.axis[j] = static_cast<uint8_t>(axis_of(j));
  return map;
}

}  // namespace

absl::StatusOr<AxisMap> BlockedAxisMap(absl::Span<const int32_t> sections, int num_pairs) {
  MROPE_RETURN_IF_ERROR(CheckSections(sections, num_pairs));
  return FillAxisMap(num_pairs, [&](int j) { return BlockedAxis(j, sections[0], sections[1]); });
}

absl::StatusOr<AxisMap> InterleavedAxisMap(absl::Span<const int32_t> sections, int num_pairs) {
  MROPE_RETURN_IF_ERROR(CheckSections(sections, num_pairs));
  const AxisMap map =
      FillAxisMap(num_pairs, [&](int j) { return InterleavedAxis(j, sections[1], sections[2]); });
  MROPE_RETURN_IF_ERROR(CheckRealized(map, "interleaved", sections, {kAxisT, kAxisH, kAxisW}));
  return map;
}

absl::StatusOr<AxisMap> HwAlternatingThenTAxisMap(absl::Span<const int32_t> sections,
                                                  int num_pairs) {
  MROPE_RETURN_IF_ERROR(CheckSections(sections, num_pairs, "[h, w, t]"));
  const AxisMap map = FillAxisMap(
      num_pairs, [&](int j) { return HwAlternatingThenTAxis(j, sections[0] + sections[1]); });
  MROPE_RETURN_IF_ERROR(
      CheckRealized(map, "hw_alternating_then_t", sections, {kAxisH, kAxisW, kAxisT}));
  return map;
}

absl::StatusOr<AxisMap> PanguInterleavedAxisMap(absl::Span<const int32_t> sections,
                                                int num_pairs) {
  MROPE_RETURN_IF_ERROR(CheckSections(sections, num_pairs));
  if (sections[0] < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pangu_interleaved mrope_section [", absl::StrJoin(sections, ", "),
        "]: its t entry must be >= 1 (the last pair is t), got ", sections[0]));
  }
  const std::array<int, kNumAxes> count = {sections[0] - 1, sections[1], sections[2]};
  std::array<int, kNumAxes> placed = {0, 0, 0};
  AxisMap map;
  map.num_pairs = num_pairs;
  int previous = -1;
  for (int j = 0; j + 1 < num_pairs; ++j) {
    int best = -1;
    for (const bool allow_previous : {false, true}) {
      for (int a = 0; a < kNumAxes; ++a) {
        if (placed[a] == count[a] || (a == previous && !allow_previous)) continue;
        // placed[a] / count[a] < placed[best] / count[best], exactly (Python's float quotients
        // of such small integers order the same way); ties keep the lower axis.
        if (best < 0 || placed[a] * count[best] < placed[best] * count[a]) best = a;
      }
      if (best >= 0) break;
    }
    map.axis[j] = static_cast<uint8_t>(best);
    ++placed[best];
    previous = best;
  }
  map.axis[num_pairs - 1] = kAxisT;
  return map;
}

absl::StatusOr<AxisMap> XdAxisMap(absl::Span<const int32_t> sections, int num_pairs) {
  MROPE_RETURN_IF_ERROR(CheckNumPairs(num_pairs));
  if (sections.empty() || sections.size() > kMaxAxes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "xd mrope_section must have 1 to ", kMaxAxes, " entries (one per axis), got [",
        absl::StrJoin(sections, ", "), "]"));
  }
  MROPE_RETURN_IF_ERROR(CheckSectionSum(sections, num_pairs));
  const int count = static_cast<int>(sections.size());
  AxisMap map = FillAxisMap(num_pairs, [&](int j) { return XdAxis(j, sections.data(), count); });
  map.split_halves = true;
  for (int j = 0; j < num_pairs; ++j) {
    map.second_axis[j] = static_cast<uint8_t>(XdAxis(j + num_pairs, sections.data(), count));
  }
  return map;
}

absl::StatusOr<AxisMap> MropeAxisMap(MropeLayout layout, absl::Span<const int32_t> sections,
                                     int num_pairs) {
  switch (layout) {
    case MropeLayout::kXd:
      return XdAxisMap(sections, num_pairs);
    case MropeLayout::kBlocked:
      return BlockedAxisMap(sections, num_pairs);
    case MropeLayout::kInterleaved:
      return InterleavedAxisMap(sections, num_pairs);
    case MropeLayout::kHwAlternatingThenT:
      return HwAlternatingThenTAxisMap(sections, num_pairs);
    case MropeLayout::kPanguInterleaved:
      return PanguInterleavedAxisMap(sections, num_pairs);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown mrope layout ", static_cast<int>(layout)));
}

absl::StatusOr<AxisMap> ExplicitAxisMap(absl::Span<const int32_t> axes) {
  const int num_pairs = static_cast<int>(axes.size());
  MROPE_RETURN_IF_ERROR(CheckNumPairs(num_pairs));
  for (int j = 0; j < num_pairs; ++j) {
    if (axes[j] < 0 || axes[j] >= kNumAxes) {
      return absl::InvalidArgumentError(
          absl::StrCat("axis of pair ", j, " must be 0 (t), 1 (h) or 2 (w), got ", axes[j]));
    }
  }
  return FillAxisMap(num_pairs, [&](int j) { return axes[j]; });
}

absl::StatusOr<AxisMap> TemporalAxisMap(int num_pairs) {
  MROPE_RETURN_IF_ERROR(CheckNumPairs(num_pairs));
  return FillAxisMap(num_pairs, [](int) { return kAxisT; });
}

absl::Status ValidateAxisMap(const AxisMap& map, int num_pairs) {
  MROPE_RETURN_IF_ERROR(CheckNumPairs(num_pairs));
  if (map.num_pairs != num_pairs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "axis map has ", map.num_pairs, " pairs, expected rotary_dim / 2 = ", num_pairs));
  }
  for (int j = 0; j < num_pairs; ++j) {
    if (map.split_halves) {
      if (map.axis[j] >= kMaxAxes || map.second_axis[j] >= kMaxAxes) {
        return absl::InvalidArgumentError(absl::StrCat(
            "axis_map.axis[", j, "]=", map.axis[j], " and axis_map.second_axis[", j,
            "]=", map.second_axis[j], " must be below ", kMaxAxes));
      }
    } else if (map.axis[j] >= kNumAxes) {
      return absl::InvalidArgumentError(absl::StrCat("axis_map.axis[", j, "]=", map.axis[j],
                                                     " is not an axis (0 = t, 1 = h, 2 = w)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace mrope
