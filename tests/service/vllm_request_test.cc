// vLLM requests through the service: get_mrope_input_positions(input_tokens, mm_features) and
// EVS-pruned prompts, bit for bit with the golden *_vllm_mm_features and *_vllm_evs cases
// (tests/golden/README.md, "Conventions of late 2026"), and their errors.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "mrope/positions/vllm_evs.h"
#include "mrope/service/model_spec.h"
#include "mrope/service/position_service.h"
#include "tests/testing/golden_cases.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;
using testing::GoldenCase;
using testing::GoldenCaseFiles;
using testing::OutputValues;
using testing::ReadGoldenCase;

constexpr const char* kFolders[] = {"qwen2_5_vl_vllm_mm_features", "qwen3_vl_vllm_mm_features",
                                    "qwen2_5_vl_vllm_evs", "qwen3_vl_vllm_evs"};
// The cases where vLLM writes an item away from its own placeholder (rules E2, E4, E5): mrope
// places it at its own, so their positions differ by design.
constexpr char kNotAtOwnPlaceholder[] = "items_not_at_own_placeholder";

bool HasTag(const std::string& path, const std::string& tag) {
  auto text = ReadFileToString(path);
  auto doc = ParseJson(*text);
  const google::protobuf::Value* tags = FindField(*doc, "tags");
  for (const auto& value : tags->list_value().values()) {
    if (value.string_value() == tag) return true;
  }
  return false;
}

template <typename T>
std::vector<double> AsDoubles(const T& values) {
  return std::vector<double>(values.begin(), values.end());
}

TEST(VllmRequest, GoldenCasesBitExact) {
  int checked = 0, not_own = 0;
  for (const std::string folder : kFolders) {
    const bool evs = absl::EndsWith(folder, "_evs");
    for (const std::string& file : GoldenCaseFiles(folder)) {
      const GoldenCase c = ReadGoldenCase(folder, file);
      SCOPED_TRACE(c.path);
      auto service = PositionService::Create(c.model);
      ASSERT_TRUE(service.ok()) << service.status();
      auto plan = service->Plan(c.prompt);
      ASSERT_TRUE(plan.ok()) << plan.status();
      OutputOptions options;
      options.decode_steps = 3;
      auto result = service->Fill<int64_t>(*plan, options);
      ASSERT_TRUE(result.ok()) << result.status();
      const bool tagged = HasTag(c.path, kNotAtOwnPlaceholder);
      if (evs) {
        // mrope names a vLLM defect exactly where the data says vLLM misplaces an item.
        bool defect = false;
        for (const VllmDefect& d : plan->evs->vllm_defects()) defect |= !d.reproduced;
        EXPECT_EQ(defect, tagged);
      }
      // Chunked prefill: two windows equal the whole prompt.
      const int64_t n = plan->seq_len;
      OutputOptions head, tail;
      head.window = TokenWindow{0, n / 2 + 1};
      tail.window = TokenWindow{n / 2 + 1, n + 3};
      auto first = service->Fill<int64_t>(*plan, head);
      auto second = service->Fill<int64_t>(*plan, tail);
      ASSERT_TRUE(first.ok() && second.ok());
      for (int axis = 0; axis < 3; ++axis) {
        const int64_t w1 = n / 2 + 1, w2 = n + 3 - w1;
        for (int64_t i = 0; i < n + 3; ++i) {
          const int64_t whole = i < n ? result->position_ids[axis * n + i]
                                      : result->decode_position_ids[axis * 3 + i - n];
          const int64_t windowed = i < w1 ? first->position_ids[axis * w1 + i]
                                          : second->position_ids[axis * w2 + i - w1];
          ASSERT_EQ(whole, windowed) << "axis " << axis << ", token " << i;
        }
      }
      if (tagged) {
        ++not_own;
        continue;
      }
      EXPECT_EQ(AsDoubles(result->position_ids), OutputValues(c.outputs, "positions", nullptr));
      ASSERT_EQ(result->mrope_position_deltas.size(), 1);
      EXPECT_EQ(result->mrope_position_deltas[0],
                FindField(c.outputs, "mrope_position_delta")->number_value());
      EXPECT_EQ(AsDoubles(result->decode_position_ids),
                OutputValues(c.outputs, "decode_positions", nullptr));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 48 + 30);  // every mm_features case, every EVS case vLLM places right
  EXPECT_EQ(not_own, 16);
}

// The request of a golden EVS case, for the error tests.
VllmEvsRequest EvsRequest(const GoldenCase& c) { return *c.prompt.vllm_evs; }

TEST(VllmRequest, EvsMaskErrorsNameVideoFrameAndCount) {
  const GoldenCase c = ReadGoldenCase("qwen2_5_vl_vllm_evs", "case_017.json");
  const ModelConfig config = [&] {
    ModelConfig out = c.model.positions;
    out.convention = Convention::kVllm;
    return out;
  }();
  VllmEvsRequest request = EvsRequest(c);
  request.keep_masks[0][1] = 0;
  EXPECT_THAT(VllmEvsPositions::Create(config, request).status().message(),
              HasSubstr("mm_features[0] (video): keep_masks[0] keeps 1 of frame 0's 2 tokens"));
  request = EvsRequest(c);
  request.keep_masks[0].back() = 1 - request.keep_masks[0].back();  // 11 or 13 kept
  EXPECT_THAT(VllmEvsPositions::Create(config, request).status().message(),
              HasSubstr("tokens; rate 0.75 keeps 12"));
  request.video_pruning_rate.reset();
  EXPECT_THAT(VllmEvsPositions::Create(config, request).status().message(),
              HasSubstr("placeholder length 12, but 1"));
  request = EvsRequest(c);
  request.video_pruning_rate = 0.5;
  EXPECT_THAT(VllmEvsPositions::Create(config, request).status().message(),
              HasSubstr("keep_masks[0] keeps 12 tokens; rate 0.5 keeps 24"));
  request = EvsRequest(c);
  request.keep_masks[0].pop_back();
  EXPECT_THAT(VllmEvsPositions::Create(config, request).status().message(),
              HasSubstr("keep_masks[0] has 47 values, the grid 48"));
  request = EvsRequest(c);
  request.keep_masks.clear();
  EXPECT_THAT(VllmEvsPositions::Create(config, request).status().message(),
              HasSubstr("video 0 has no keep mask"));
}

TEST(VllmRequest, FeatureErrorsNameTheFeature) {
  const GoldenCase c = ReadGoldenCase("qwen2_5_vl_vllm_mm_features", "case_010.json");
  auto service = PositionService::Create(c.model);
  ASSERT_TRUE(service.ok());
  Prompt prompt = c.prompt;
  prompt.vllm->features[0].length -= 1;
  EXPECT_THAT(service->Plan(prompt).status().message(),
              HasSubstr("mm_features[0] (video): placeholder length 7 differs from its grid's 8"));
  prompt = c.prompt;
  prompt.vllm->features[0].offset -= 1;
  EXPECT_THAT(service->Plan(prompt).status().message(),
              HasSubstr("mm_features[0] (video): token 4 of its placeholder is 151652"));
  prompt = c.prompt;
  prompt.vllm->features.push_back(prompt.vllm->features[0]);
  EXPECT_THAT(service->Plan(prompt).status().message(),
              HasSubstr("mm_features[1] (video): placeholder at 5 overlaps the previous item's"));
  prompt = c.prompt;
  prompt.vllm->features[0].modality = Modality::kImage;
  EXPECT_THAT(service->Plan(prompt).status().message(),
              HasSubstr("mm_features[0] (image): image grid t must be 1 (vLLM asserts it), "
                        "got 8"));
  prompt = c.prompt;
  prompt.vllm->features[0].length = 1000;
  EXPECT_THAT(service->Plan(prompt).status().message(),
              HasSubstr("must have length >= 1 and lie in the prompt's 14 tokens"));
}

TEST(VllmRequest, FamiliesWithoutTheVllmConventionRefuse) {
  auto spec = PresetModelSpec("qwen2_5_omni");
  ASSERT_TRUE(spec.ok());
  auto service = PositionService::Create(*spec);
  ASSERT_TRUE(service.ok());
  const std::vector<int64_t> tokens = {1, 2, 3};
  // Built with its request (batch, sequences, vllm): assigning or emplacing into an empty
  // optional makes GCC's -O1 (the ASan build) warn -Wmaybe-uninitialized on the inlined
  // branch for an engaged one, which never runs.
  const Prompt prompt = {{}, {}, VllmRequest{tokens, {}}};
  EXPECT_THAT(service->Plan(prompt).status().message(),
              HasSubstr("a vLLM request needs the vLLM convention, and qwen2_5_omni has none"));
}

}  // namespace
}  // namespace mrope
