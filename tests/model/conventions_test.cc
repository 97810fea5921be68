// The release table (mrope/model/conventions.h): resolution by release, names and aliases,
// errors naming the verified releases, and the table's consistency with the family table.
#include "mrope/model/conventions.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/model/model_family.h"
#include "mrope/positions/model_config.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;

TEST(Conventions, ReleasesResolveToTheConventionCoveringThem) {
  EXPECT_EQ(ResolveConvention(ModelFamily::kQwen2_5Vl, "transformers==4.57.6").value(),
            Convention::kHfV4);
  // transformers 5.0 and 5.1 still give 4.x's values for the Qwen-VL families (release runs).
  EXPECT_EQ(ResolveConvention(ModelFamily::kQwen2_5Vl, "transformers==5.1.0").value(),
            Convention::kHfV4);
  EXPECT_EQ(ResolveConvention(ModelFamily::kQwen2_5Vl, "transformers==5.2.0").value(),
            Convention::kHfV5_2);
  EXPECT_EQ(ResolveConvention(ModelFamily::kQwen2_5Vl, "transformers==5.17.0").value(),
            Convention::kHfV5);
  // #48669's video time from 5.18.
  EXPECT_EQ(ResolveConvention(ModelFamily::kQwen2_5Vl, "transformers==5.18.0").value(),
            Convention::kHfV5_18);
  EXPECT_EQ(ResolveConvention(ModelFamily::kQwen2_5Vl, "transformers==5.23.0").value(),
            Convention::kHfV5_18);
  // A release between verified ones (5.22.1, not run) is in the range.
  EXPECT_EQ(ResolveConvention(ModelFamily::kQwen2Vl, "transformers==5.22.1").value(),
            Convention::kHfV5);
  EXPECT_EQ(ResolveConvention(ModelFamily::kGlm4v, "transformers==5.23.0").value(),
            Convention::kHfV5);
  EXPECT_EQ(ResolveConvention(ModelFamily::kQwen3Vl, "vllm==0.33.0").value(),
            Convention::kVllm);
}

TEST(Conventions, UnverifiedReleasesNameTheVerifiedOnes) {
  const absl::Status later =
      ResolveConvention(ModelFamily::kQwen3_5, "transformers==5.24.0").status();
  EXPECT_EQ(later.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(later.message(),
              HasSubstr("transformers 5.24.0 is not a release mrope has verified for qwen3_5"));
  EXPECT_THAT(later.message(), HasSubstr("to 5.23.0 (transformers-5.3)"));
  // Qwen2-VL's 5.3.0 to 5.5.4 give values no convention reproduces: a gap between ranges.
  EXPECT_THAT(ResolveConvention(ModelFamily::kQwen2Vl, "transformers==5.4.0").status().message(),
              HasSubstr("verified: 4.45.2 to 5.1.0 (transformers-4.45), 5.2.0 "
                        "(transformers-5.0), 5.6.2 to 5.23.0 (transformers-5.3)"));
  // Qwen3.5 is new in 5.x: no 4.x release.
  EXPECT_THAT(ResolveConvention(ModelFamily::kQwen3_5, "transformers==4.57.6").status().message(),
              HasSubstr("verified: "));
  // vLLM's golden files are of its main branch, not a release.
  EXPECT_THAT(ResolveConvention(ModelFamily::kQwen2Vl, "vllm==0.33.0").status().message(),
              HasSubstr("it has verified no vllm release for it"));
  EXPECT_THAT(ResolveConvention(ModelFamily::kQwen2Vl, "sglang==0.5.0").status().message(),
              HasSubstr("the reference must be transformers or vllm, got 'sglang'"));
  EXPECT_THAT(ResolveConvention(ModelFamily::kQwen2Vl, "transformers==5.x").status().message(),
              HasSubstr("expected a release such as '5.23.0', got '5.x'"));
}

TEST(Conventions, EveryRangeOfTheTableIsARelease) {
  for (const ConventionRelease& entry : ConventionReleases()) {
    if (entry.first.empty()) continue;  // no release verified
    EXPECT_TRUE(ParseRelease(entry.first).ok()) << entry.first;
    EXPECT_TRUE(ParseRelease(entry.last).ok()) << entry.last;
    EXPECT_LE(*ParseRelease(entry.first), *ParseRelease(entry.last)) << entry.first;
  }
  // A local or pre-release suffix is the release's numbers (the installed package's version).
  EXPECT_EQ(ResolveConvention(ModelFamily::kGlm4v, "transformers==5.23.0+cu130").value(),
            Convention::kHfV5);
}

TEST(Conventions, NamesAndAliases) {
  EXPECT_EQ(ParseConvention("transformers-5.3").value(), Convention::kHfV5);
  EXPECT_EQ(ParseConvention("hf_v5").value(), Convention::kHfV5);
  EXPECT_EQ(ParseConvention("hf").value(), Convention::kHfV4);
  EXPECT_EQ(ResolveConvention(ModelFamily::kQwen2_5Vl, "transformers-5.18").value(),
            Convention::kHfV5_18);
  EXPECT_THAT(ResolveConvention(ModelFamily::kQwen2Vl, "transformers-5.18").status().message(),
              HasSubstr("convention 'transformers-5.18' is not implemented for qwen2_vl"));
  for (const Convention c : AllConventions()) {
    EXPECT_EQ(ParseConvention(ConventionReleaseName(c)).value(), c);
  }
  // Each convention's preset: the family's reference video time under it (Qwen2.5-VL).
  EXPECT_EQ(ConventionPreset(ModelFamily::kQwen2_5Vl, Convention::kHfV4).value(),
            "qwen2_5_vl_hf");
  EXPECT_EQ(ConventionPreset(ModelFamily::kQwen2_5Vl, Convention::kHfV5_18).value(),
            "qwen2_5_vl_hf_v5_18");
  EXPECT_EQ(PresetConfig("qwen2_5_vl_hf_v5_18").value().video_time_rounding,
            VideoTimeRounding::kScaleThenTruncate);
  EXPECT_EQ(ConventionPreset(ModelFamily::kGlm4v, Convention::kHfV5).value(), "glm4v_hf_v5");
  EXPECT_EQ(ConventionPreset(ModelFamily::kQwen3_5, Convention::kHfV5_2).value(), "qwen3_5");
}

// Every implemented (family, convention) has one entry, every entry is implemented, and a
// family's ranges of one reference do not overlap.
TEST(Conventions, TableMatchesTheFamilyTable) {
  std::set<std::pair<ModelFamily, Convention>> listed;
  for (const ConventionRelease& entry : ConventionReleases()) {
    const ModelFamilyInfo& row = FamilyInfo(entry.family);
    EXPECT_TRUE(listed.insert({entry.family, entry.convention}).second) << row.name;
    EXPECT_THAT(row.rules.conventions, ::testing::Contains(entry.convention)) << row.name;
    EXPECT_EQ(entry.first.empty(), entry.last.empty()) << row.name;
    EXPECT_FALSE(entry.verified.empty()) << row.name;
    if (entry.first.empty()) continue;
    const std::string first = absl::StrCat(ConventionReference(entry.convention), "==",
                                           entry.first);
    const std::string last = absl::StrCat(ConventionReference(entry.convention), "==",
                                          entry.last);
    EXPECT_EQ(ResolveConvention(entry.family, first).value(), entry.convention) << first;
    EXPECT_EQ(ResolveConvention(entry.family, last).value(), entry.convention) << last;
  }
  for (const ModelFamilyInfo& row : ModelFamilies()) {
    for (const Convention c : row.rules.conventions) {
      EXPECT_EQ(listed.count({row.family, c}), 1u) << row.name << " " << ConventionName(c);
    }
  }
}

}  // namespace
}  // namespace mrope
