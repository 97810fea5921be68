#include "mrope/model/conventions.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "mrope/common/status_macros.h"

namespace mrope {
namespace {

// How an entry was verified (README.md, "Conventions by release"): "release runs":
// tools/reference_releases.py installed the range's first release and each minor's last patch
// in it and agreed bit for bit on every seeded prompt (get_rope_index; decode where the release's
// get_rope_index reads mm_token_type_ids, its generate() then being callable alone); "live
// tests": python/tests/test_reference_*.py at the pinned release, in CI; "golden files": the
// cases of tests/golden, copied from the range's release.
constexpr absl::string_view kRuns = "release runs";
constexpr absl::string_view kRunsLive = "release runs; live tests";
constexpr absl::string_view kRunsGolden = "release runs; golden files";
constexpr absl::string_view kRunsLiveGolden = "release runs; live tests; golden files";
constexpr absl::string_view kLive = "live tests";
constexpr absl::string_view kGolden = "golden files";
constexpr absl::string_view kLiveGolden = "live tests; golden files";
constexpr absl::string_view kGoldenMain = "golden files of vLLM's main of August 2026";
constexpr absl::string_view kGoldenNotDecode =
    "golden files; release runs 5.0.0 to 5.2.0 agree but for the generate() decode step";

// Per family (in the family table's order), per convention: the releases reproduced. A family
// or a convention of one is one more entry.
std::vector<ConventionRelease> BuildReleases() {
  using F = ModelFamily;
  using C = Convention;
  return {
      {F::kQwen2Vl, C::kHfV4, "4.45.2", "5.1.0", kRunsLiveGolden},
      {F::kQwen2Vl, C::kHfV5_2, "5.2.0", "5.2.0", kRunsGolden},
      {F::kQwen2Vl, C::kHfV5, "5.6.2", "5.23.0", kRunsLiveGolden},
      {F::kQwen2Vl, C::kVllm, "", "", kGoldenMain},
      {F::kQwen2_5Vl, C::kHfV4, "4.52.4", "5.1.0", kRunsLiveGolden},
      {F::kQwen2_5Vl, C::kHfV5_2, "5.2.0", "5.2.0", kRunsGolden},
      {F::kQwen2_5Vl, C::kHfV5, "5.6.2", "5.17.0", kRunsGolden},
      {F::kQwen2_5Vl, C::kHfV5_18, "5.18.0", "5.23.0", kRunsLive},
      {F::kQwen2_5Vl, C::kVllm, "0.33.0", "0.33.0", kLiveGolden},
      {F::kQwen3Vl, C::kHfV4, "4.57.6", "5.1.0", kRunsLiveGolden},
      {F::kQwen3Vl, C::kHfV5_2, "5.2.0", "5.2.0", kRunsGolden},
      {F::kQwen3Vl, C::kHfV5, "5.4.0", "5.23.0", kRunsLiveGolden},
      {F::kQwen3Vl, C::kVllm, "0.33.0", "0.33.0", kLiveGolden},
      // The Omni thinkers' generate() (PR #47872) decodes each axis from its last value from
      // 5.16.0: 5.15.1 and 5.16.0 to 5.23.0 run with the thinkers' decode driven.
      {F::kQwen2_5Omni, C::kHfV4, "4.52.4", "4.57.6", kRunsLiveGolden},
      {F::kQwen2_5Omni, C::kHfV5_2, "5.0.0", "5.15.1", kRunsGolden},
      {F::kQwen2_5Omni, C::kHfV5, "5.16.0", "5.23.0", kRunsLive},
      {F::kQwen3Omni, C::kHfV4, "4.57.6", "4.57.6", kLiveGolden},
      {F::kQwen3Omni, C::kHfV5_2, "5.2.0", "5.15.1", kRunsGolden},
      {F::kQwen3Omni, C::kHfV5, "5.16.0", "5.23.0", kRunsLive},
      {F::kGlm4v, C::kHfV4, "4.53.3", "4.57.6", kRunsLiveGolden},
      {F::kGlm4v, C::kHfV5_2, "5.0.0", "5.2.0", kRunsGolden},
      {F::kGlm4v, C::kHfV5, "5.3.0", "5.23.0", kRunsLive},
      {F::kGlm4vMoe, C::kHfV4, "4.57.6", "4.57.6", kGolden},
      {F::kGlm4vMoe, C::kHfV5_2, "5.2.0", "5.2.0", kGolden},
      {F::kQwen3_5, C::kHfV5_2, "5.2.0", "5.2.0", kRunsGolden},
      {F::kQwen3_5, C::kHfV5, "5.4.0", "5.23.0", kRunsLive},
      {F::kQwen3_5Moe, C::kHfV5_2, "5.2.0", "5.2.0", kGolden},
      {F::kQwen3_5Moe, C::kHfV5, "5.23.0", "5.23.0", kLive},
      {F::kGlm46v, C::kHfV5_2, "5.0.0", "5.2.0", kRunsGolden},
      {F::kGlm46v, C::kHfV5, "5.3.0", "5.23.0", kRunsLive},
      {F::kGlmOcr, C::kHfV5_2, "5.2.0", "5.2.0", kGolden},
      {F::kPaddleOcrVl, C::kHfV5_2, "5.2.0", "5.2.0", kRunsGolden},
      {F::kPaddleOcrVl, C::kHfV5, "5.3.0", "5.23.0", kRunsLive},
      {F::kErnie4_5VlMoe, C::kHfV5_2, "5.2.0", "5.2.0", kGoldenNotDecode},
      {F::kErnie4_5VlMoe, C::kHfV5, "5.6.2", "5.23.0", kRunsLive},
      {F::kGlmImage, C::kHfV5_2, "5.1.0", "5.23.0", kRunsLiveGolden},
      {F::kQwen4Exp, C::kHfV5, "5.23.0", "5.23.0", kLive},
      {F::kCosmos3Omni, C::kHfV5, "5.23.0", "5.23.0", kLive},
      {F::kCosmos3Omni, C::kVllm, "0.33.0", "0.33.0", kLive},
      {F::kCosmos3Edge, C::kHfV5, "5.23.0", "5.23.0", kLive},
      {F::kCosmos3Edge, C::kVllm, "0.33.0", "0.33.0", kLive},
      {F::kOpenPanguVl, C::kVllm, "0.33.0", "0.33.0", kLive},
      {F::kIsaac, C::kVllm, "0.33.0", "0.33.0", kLive},
      {F::kKeye, C::kVllm, "0.33.0", "0.33.0", kLive},
      {F::kCohereCompass, C::kHfV5, "5.23.0", "5.23.0", kLive},
      {F::kCohereCompass, C::kVllm, "0.33.0", "0.33.0", kLive},
      {F::kHunyuanVl, C::kHfV5, "5.23.0", "5.23.0", kLive},
  };
}

bool Covers(const ConventionRelease& entry, const std::vector<int64_t>& release) {
  return !entry.first.empty() && *ParseRelease(entry.first) <= release &&
         release <= *ParseRelease(entry.last);
}

std::string RangeText(const ConventionRelease& entry) {
  return entry.first == entry.last ? std::string(entry.first)
                                   : absl::StrCat(entry.first, " to ", entry.last);
}

}  // namespace

const std::vector<ConventionRelease>& ConventionReleases() {
  static const std::vector<ConventionRelease>* const kTable =
      new std::vector<ConventionRelease>(BuildReleases());
  return *kTable;
}

absl::string_view ConventionReference(Convention convention) {
  return convention == Convention::kVllm ? "vllm" : "transformers";
}

absl::string_view ConventionReleaseName(Convention convention) {
  switch (convention) {
    case Convention::kHfV4:
      return "transformers-4.45";
    case Convention::kHfV5_2:
      return "transformers-5.0";
    case Convention::kHfV5:
      return "transformers-5.3";
    case Convention::kHfV5_18:
      return "transformers-5.18";
    case Convention::kVllm:
      return "vllm-0.33";
  }
  return "";
}

absl::StatusOr<Convention> ResolveConvention(ModelFamily family, absl::string_view spec) {
  const ModelFamilyInfo& row = FamilyInfo(family);
  const std::vector<absl::string_view> parts = absl::StrSplit(spec, absl::MaxSplits("==", 1));
  if (parts.size() == 1) {
    MROPE_ASSIGN_OR_RETURN(const Convention convention, ParseConvention(spec));
    const std::vector<Convention>& own = row.rules.conventions;
    if (std::find(own.begin(), own.end(), convention) == own.end()) {
      return absl::InvalidArgumentError(absl::StrCat("convention '", spec,
                                                     "' is not implemented for ", row.name));
    }
    return convention;
  }
  const absl::string_view reference = parts[0];
  if (reference != "transformers" && reference != "vllm") {
    return absl::InvalidArgumentError(absl::StrCat(
        "convention '", spec, "': the reference must be transformers or vllm, got '",
        reference, "'"));
  }
  const absl::StatusOr<std::vector<int64_t>> parsed = ParseRelease(parts[1]);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("convention '", spec, "': ", parsed.status().message()));
  }
  const std::vector<int64_t>& release = *parsed;
  std::vector<std::string> verified;
  for (const ConventionRelease& entry : ConventionReleases()) {
    if (entry.family != family || ConventionReference(entry.convention) != reference ||
        entry.first.empty()) {
      continue;
    }
    if (Covers(entry, release)) return entry.convention;
    verified.push_back(
        absl::StrCat(RangeText(entry), " (", ConventionReleaseName(entry.convention), ")"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      reference, " ", parts[1], " is not a release mrope has verified for ", row.name,
      verified.empty() ? absl::StrCat("; it has verified no ", reference, " release for it")
                       : absl::StrCat("; verified: ", absl::StrJoin(verified, ", "))));
}

absl::StatusOr<std::string> ConventionPreset(ModelFamily family, Convention convention) {
  const ModelFamilyInfo& row = FamilyInfo(family);
  const VideoTimeRounding rounding = ConventionRulesOf(convention).reference_video_time;
  // The rounding matters where the family reads tokens_per_second (Qwen2.5-VL).
  const bool rounds = UsesTokensPerSecond(row.rules.policy);
  if (row.preset.convention == convention &&
      (!rounds || row.preset.video_time_rounding == rounding)) {
    return std::string(row.name);
  }
  for (const PresetVariant& variant : row.variants) {
    if (variant.convention == convention && (!rounds || variant.video_time_rounding == rounding)) {
      return variant.name;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("the ", ConventionReleaseName(convention),
                                                 " convention is not implemented for ",
                                                 row.name));
}

}  // namespace mrope
