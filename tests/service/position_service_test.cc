// PositionService: every golden case through the proto API, agreement with the plain
// mrope/positions API, windows, decode, packing, output types, explicit spans, cos/sin, errors
// and concurrent use.

#include "mrope/service/position_service.h"

#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/position_buffer.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/service/proto_convert.h"
#include "mrope/service/request_io.h"
#include "tests/testing/golden_cases.h"
#include "tests/testing/service_testing.h"

namespace mrope {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::mrope::testing::ArrayValues;
using ::mrope::testing::GoldenCase;
using ::mrope::testing::GoldenCaseFiles;
using ::mrope::testing::GoldenPositionKeys;
using ::mrope::testing::OutputValues;
using ::mrope::testing::ReadGoldenCase;
using ::mrope::testing::StoredDeltasKey;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

void ExpectSameAsGolden(const GoldenCase& c) {
  SCOPED_TRACE(c.path);
  const PositionService service = MakeService(c.model);
  v1::PositionRequest request = c.request;
  request.mutable_options()->set_decode_steps(3);
  const v1::PositionResponse response = Handle(service, request);
  struct Field {
    std::string golden_key;
    const v1::PositionArray& array;
  };
  const Field fields[] = {
      {"position_ids", response.position_ids()},
      {"mrope_position_deltas", response.mrope_position_deltas()},
      {"decode_position_ids", response.decode_position_ids()},
      {StoredDeltasKey(c.outputs), response.rope_deltas()},
  };
  for (const Field& field : fields) {
    if (FindField(c.outputs, field.golden_key) == nullptr) continue;  // *_hf_v5: no decode
    std::vector<int64_t> shape;
    const std::vector<double> expected = OutputValues(c.outputs, field.golden_key, &shape);
    EXPECT_THAT(field.array.shape(), ElementsAreArray(shape)) << field.golden_key;
    ASSERT_EQ(ArrayValues(field.array), expected) << field.golden_key;
  }
}

// Every golden position case, as JSON requests (the case files themselves) through Handle().
TEST(PositionServiceTest, EveryGoldenCaseThroughTheProtoApi) {
  const std::vector<std::string> keys = GoldenPositionKeys();
  ASSERT_EQ(keys.size(), 23u);
  int cases = 0;
  for (const std::string& key : keys) {
    const std::vector<std::string> files = GoldenCaseFiles(key);
    EXPECT_GE(files.size(), 24u) << key;
    for (const std::string& file : files) ExpectSameAsGolden(ReadGoldenCase(key, file));
    cases += files.size();
  }
  // v4.57.6 and vLLM 383 + 48, v5.2.0 on their inputs 368, new families 224, v5.15.0 74.
  EXPECT_EQ(cases, 383 + 48 + 368 + 224 + 74);
}

TEST(PositionServiceTest, AutoOutputTypeFollowsTheModel) {
  const GoldenCase omni = ReadGoldenCase("qwen3_omni", "case_018.json");
  EXPECT_EQ(Handle(MakeService(omni.model), omni.request).output_type(),
            v1::PositionOptions::FLOAT32);
  const GoldenCase vl = ReadGoldenCase("qwen2_vl", "case_026.json");
  EXPECT_EQ(Handle(MakeService(vl.model), vl.request).output_type(), v1::PositionOptions::INT64);
}

// HunYuan-VL's response has one plane per axis, its decode positions too (they had three).
TEST(PositionServiceTest, FourAxesInTheResponse) {
  auto request = PositionRequestFromJson(R"({"inputs": {
      "input_ids": [[7, 120118, 120120, 120120, 120120, 120120, 120120, 120120, 120119, 8]],
      "mm_token_type_ids": [[0, 0, 1, 1, 1, 1, 1, 1, 0, 0]], "image_grid_thw": [[1, 4, 2]]},
      "options": {"decode_steps": 2}})");
  ASSERT_TRUE(request.ok()) << request.status();
  const v1::PositionResponse response = Handle(PresetService("hunyuan_vl"), *request);
  EXPECT_THAT(response.position_ids().shape(), ::testing::ElementsAre(4, 1, 10));
  EXPECT_THAT(response.decode_position_ids().shape(), ::testing::ElementsAre(4, 1, 2));
  EXPECT_THAT(response.decode_position_ids().int64_values(),
              ::testing::ElementsAre(10, 11, 10, 11, 10, 11, 10, 11));
}

// A PositionBuffer is not zeroed on resize, so the writers must set every entry: refill one
// whose memory holds a sentinel and compare with a zero-initialised std::vector.
TEST(PositionServiceTest, PositionBufferEntriesAreAllWritten) {
  const GoldenCase c = ReadGoldenCase("qwen2_5_vl", "case_015.json");  // padded, video
  const Prompt prompt = PromptFromProto(c.request).value();
  const BatchPlan plan = PlanBatch(c.model.positions, prompt.batch).value();
  std::vector<int64_t> want, want_decode;
  ASSERT_TRUE(FillBatch(plan, want).ok());
  ASSERT_TRUE(FillDecode(plan, 3, want_decode).ok());

  PositionBuffer<int64_t> got(want.size() + 64, -7);
  PositionBuffer<int64_t> got_decode(want_decode.size() + 64, -7);
  got.clear();
  got_decode.clear();
  ASSERT_TRUE(FillBatch(plan, got).ok());
  ASSERT_TRUE(FillDecode(plan, 3, got_decode).ok());
  EXPECT_THAT(got, ElementsAreArray(want));
  EXPECT_THAT(got_decode, ElementsAreArray(want_decode));
}

// The C++ API gives what PlanBatch + FillBatch + FillDecode give.
TEST(PositionServiceTest, EqualsThePositionsApi) {
  const GoldenCase c = ReadGoldenCase("qwen2_5_vl", "case_015.json");  // padded, video
  const PositionService service = MakeService(c.model);
  auto prompt = PromptFromProto(c.request);
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  OutputOptions options;
  options.decode_steps = 4;
  auto result = service.Compute<int32_t>(*prompt, options);
  ASSERT_TRUE(result.ok()) << result.status();

  auto plan = PlanBatch(c.model.positions, prompt->batch);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<int32_t> positions, decode;
  ASSERT_TRUE(FillBatch(*plan, positions).ok());
  ASSERT_TRUE(FillDecode(*plan, 4, decode).ok());
  EXPECT_THAT(result->position_ids, ElementsAreArray(positions));
  EXPECT_THAT(result->decode_position_ids, ElementsAreArray(decode));
  EXPECT_THAT(result->shape, ElementsAre(3, plan->batch_size, plan->seq_len));
  EXPECT_EQ(result->mrope_position_deltas, PerRowDeltas<int32_t>(*plan, &RowLayout::delta));
  EXPECT_EQ(result->rope_deltas, PerRowDeltas<int32_t>(*plan, &RowLayout::decode_delta));
}

// Window [a, b) of an unpadded row equals the slice [a, b) of the full prompt; indices past the
// prompt equal the decode positions, index + delta on every axis.
TEST(PositionServiceTest, WindowsAreSlicesAndDecodeSteps) {
  for (const auto& [model, file] : std::vector<std::pair<std::string, std::string>>{
           {"qwen2_vl", "case_024.json"},      // video + image
           {"qwen2_5_vl", "case_026.json"},    // positive delta
           {"qwen3_vl", "case_000.json"},      // ends inside an open image block
           {"qwen2_5_omni", "case_036.json"},  // video
           {"qwen3_omni", "case_018.json"}}) {  // float positions
    SCOPED_TRACE(model + "/" + file);
    const GoldenCase c = ReadGoldenCase(model, file);
    const PositionService service = MakeService(c.model);
    auto prompt = PromptFromProto(c.request);
    ASSERT_TRUE(prompt.ok()) << prompt.status();
    auto plan = service.Plan(*prompt);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const int64_t n = plan->seq_len;
    OutputOptions full_options;
    full_options.decode_steps = 5;
    auto full = service.Fill<float>(*plan, full_options);
    ASSERT_TRUE(full.ok()) << full.status();
    for (const TokenWindow window : {TokenWindow{0, n}, TokenWindow{1, n - 1},
                                     TokenWindow{n / 2, n + 5}, TokenWindow{n + 2, n + 3}}) {
      SCOPED_TRACE(::testing::Message() << "window [" << window.begin << ", " << window.end << ")");
      OutputOptions options;
      options.window = window;
      auto part = service.Fill<float>(*plan, options);
      ASSERT_TRUE(part.ok()) << part.status();
      const int64_t w = window.end - window.begin;
      EXPECT_THAT(part->shape, ElementsAre(3, 1, w));
      for (int axis = 0; axis < 3; ++axis) {
        for (int64_t i = window.begin; i < window.end; ++i) {
          const float got = part->position_ids[axis * w + i - window.begin];
          const float want = i < n ? full->position_ids[axis * n + i]
                                   : full->decode_position_ids[axis * 5 + i - n];
          ASSERT_EQ(got, want) << "axis " << axis << " index " << i;
          if (i >= n) {
            EXPECT_EQ(got, static_cast<float>(i) + full->rope_deltas[0]);
          }
        }
      }
    }
  }
}

// Packed output: every row's real tokens back to back, cu_seqlens at the row boundaries.
TEST(PositionServiceTest, PackedDropsPaddingAndGivesCuSeqlens) {
  const GoldenCase c = ReadGoldenCase("qwen3_vl", "case_038.json");  // 3 padded rows
  const PositionService service = MakeService(c.model);
  v1::PositionRequest request = c.request;
  const v1::PositionResponse padded = Handle(service, request);
  request.mutable_options()->set_layout(v1::PositionOptions::PACKED);
  const v1::PositionResponse packed = Handle(service, request);

  const int64_t b = padded.position_ids().shape(1);
  const int64_t l = padded.position_ids().shape(2);
  std::vector<int64_t> cu_seqlens = {0};
  std::vector<int64_t> expected[3];
  for (int64_t row = 0; row < b; ++row) {
    const v1::TokenRow& mask = c.request.inputs().attention_mask(row);
    int64_t n = 0;
    for (int64_t col = 0; col < l; ++col) {
      if (mask.ids(col) == 0) continue;
      ++n;
      for (int axis = 0; axis < 3; ++axis) {
        expected[axis].push_back(padded.position_ids().int64_values((axis * b + row) * l + col));
      }
    }
    cu_seqlens.push_back(cu_seqlens.back() + n);
  }
  EXPECT_THAT(packed.cu_seqlens(), ElementsAreArray(cu_seqlens));
  const int64_t total = cu_seqlens.back();
  EXPECT_LT(total, b * l);
  EXPECT_THAT(packed.position_ids().shape(), ElementsAre(3, total));
  std::vector<int64_t> flat;
  for (const auto& axis : expected) flat.insert(flat.end(), axis.begin(), axis.end());
  EXPECT_THAT(packed.position_ids().int64_values(), ElementsAreArray(flat));
  EXPECT_TRUE(MessageDifferencer::Equals(packed.mrope_position_deltas(),
                                         padded.mrope_position_deltas()));
}

// Explicit spans give the positions of the same prompt written as token ids.
TEST(PositionServiceTest, ExplicitSpansMatchTokenIds) {
  const PositionService service = PresetService("qwen2_5_vl");
  // T3 <vision_start> video 2x4x4 (2 grids of 4 tokens) <vision_end> T2, and T5.
  auto tokens = PositionRequestFromJson(R"({"inputs": {
      "input_ids": [[1, 2, 3, 151652, 151656, 151656, 151656, 151656, 151656, 151656, 151656,
                     151656, 151653, 4, 5]],
      "video_grid_thw": [[2, 4, 4]], "second_per_grid_ts": [1.5]}})");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  auto spans = PositionRequestFromTextproto(R"pb(
    sequences {
      spans { kind: TEXT text_tokens: 3 }
      spans { kind: VIDEO grid { t: 2 h: 4 w: 4 } seconds_per_grid: 1.5 }
      spans { kind: TEXT text_tokens: 2 }
    }
    sequences { spans { kind: TEXT text_tokens: 5 } }
  )pb");
  ASSERT_TRUE(spans.ok()) << spans.status();
  const v1::PositionResponse from_tokens = Handle(service, *tokens);
  const v1::PositionResponse from_spans = Handle(service, *spans);
  // Row 0 is the longest (15 tokens); row 1 (5 tokens) is right-aligned with 0 padding.
  ASSERT_THAT(from_spans.position_ids().shape(), ElementsAre(3, 2, 15));
  for (int axis = 0; axis < 3; ++axis) {
    for (int col = 0; col < 15; ++col) {
      EXPECT_EQ(from_spans.position_ids().int64_values((axis * 2) * 15 + col),
                from_tokens.position_ids().int64_values(axis * 15 + col));
      const int64_t row1 = from_spans.position_ids().int64_values((axis * 2 + 1) * 15 + col);
      EXPECT_EQ(row1, col < 10 ? 0 : col - 10);
    }
  }
  // Deltas against each sequence's own length.
  EXPECT_THAT(from_spans.mrope_position_deltas().int64_values(),
              ElementsAre(from_tokens.mrope_position_deltas().int64_values(0), 0));
}

// A GLM video as spans: text, then per frame a one-frame VIDEO span with the timestamp text
// after it (tests/golden/README.md example glm4v/case_001, `T28 V3x22x34@ts0,1,2 T10`).
TEST(PositionServiceTest, GlmVideoAsSpansMatchesTheGoldenCase) {
  const GoldenCase c = ReadGoldenCase("glm4v", "case_001.json");
  const PositionService service = MakeService(c.model);
  auto spans = PositionRequestFromTextproto(R"pb(
    sequences {
      spans { kind: TEXT text_tokens: 29 }
      spans { kind: VIDEO grid { t: 1 h: 22 w: 34 } }
      spans { kind: TEXT text_tokens: 1 }
      spans { kind: VIDEO grid { t: 1 h: 22 w: 34 } }
      spans { kind: TEXT text_tokens: 1 }
      spans { kind: VIDEO grid { t: 1 h: 22 w: 34 } }
      spans { kind: TEXT text_tokens: 12 }
    }
    options { decode_steps: 3 }
  )pb");
  ASSERT_TRUE(spans.ok()) << spans.status();
  const v1::PositionResponse response = Handle(service, *spans);
  std::vector<int64_t> shape;
  EXPECT_EQ(ArrayValues(response.position_ids()),
            OutputValues(c.outputs, "position_ids", &shape));
  EXPECT_EQ(ArrayValues(response.decode_position_ids()),
            OutputValues(c.outputs, "decode_position_ids", &shape));
}

// Limits past their ceilings (ValidatePositionLimits) are refused when the service is made.
TEST(PositionServiceTest, CreateRefusesLimitsPastTheirCeilings) {
  auto spec = PresetModelSpec("qwen2_5_vl");
  ASSERT_TRUE(spec.ok());
  PositionLimits limits;
  limits.max_position = kMaxPositionCeiling + 1;
  auto service = PositionService::Create(*spec, limits);
  ASSERT_FALSE(service.ok());
  EXPECT_THAT(std::string(service.status().message()),
              HasSubstr("limits: max_position must be in [1, 4503599627370496], got "
                        "4503599627370497"));
}

// int32 output refuses values above INT32_MAX; int64 holds them.
TEST(PositionServiceTest, Int32RefusesTooLargeValues) {
  auto spec = PresetModelSpec("qwen2_5_vl");
  ASSERT_TRUE(spec.ok());
  PositionLimits limits;
  limits.max_position = int64_t{1} << 40;
  const PositionService service = MakeService(*spec, limits);
  Prompt prompt;
  // Temporal grid 1 of a video at 2e9 s per grid: t = 4e9 > INT32_MAX.
  prompt.sequences = {{Span::Text(2), Span::Video({2, 2, 2}, 2e9f), Span::Text(1)}};
  auto wide = service.Compute<int64_t>(prompt, OutputOptions());
  ASSERT_TRUE(wide.ok()) << wide.status();
  const int64_t max_t = *std::max_element(wide->position_ids.begin(), wide->position_ids.end());
  EXPECT_GT(max_t, std::numeric_limits<int32_t>::max());

  auto narrow = service.Compute<int32_t>(prompt, OutputOptions());
  ASSERT_FALSE(narrow.ok());
  EXPECT_THAT(std::string(narrow.status().message()),
              HasSubstr("position 4e+09 does not fit the requested output type"));

  auto request = PositionRequestFromTextproto(R"pb(
    sequences {
      spans { kind: TEXT text_tokens: 2 }
      spans { kind: VIDEO grid { t: 2 h: 2 w: 2 } seconds_per_grid: 2e9 }
    }
    options { output_type: INT32 }
  )pb");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_FALSE(service.Handle(*request).ok());
  request->mutable_options()->set_output_type(v1::PositionOptions::INT64);
  EXPECT_TRUE(service.Handle(*request).ok());
}

// Qwen3-Omni positions are float32 (29.333334 in this case): integer output is refused.
TEST(PositionServiceTest, IntegerOutputRefusesFloatPositions) {
  const GoldenCase c = ReadGoldenCase("qwen3_omni", "case_018.json");
  v1::PositionRequest request = c.request;
  request.mutable_options()->set_output_type(v1::PositionOptions::INT64);
  auto response = MakeService(c.model).Handle(request);
  ASSERT_FALSE(response.ok());
  EXPECT_THAT(std::string(response.status().message()),
              HasSubstr("positions are float32 (Qwen3-Omni); request float output"));
}

// cos/sin of float32 positions needs them integral.
TEST(PositionServiceTest, CosSinRefusesFractionalPositions) {
  const GoldenCase c = ReadGoldenCase("qwen3_omni", "case_018.json");
  v1::PositionRequest request = c.request;
  request.mutable_options()->set_cos_sin(true);
  auto response = MakeService(c.model).Handle(request);
  ASSERT_FALSE(response.ok());
  EXPECT_THAT(std::string(response.status().message()), HasSubstr("29.33"));
}

// A prompt of two batch rows and more tokens than one cos/sin chunk (FillCosSin works 4096
// tokens at a time): every pair of every token is PairCosSin of its axis position, and the
// float output (float positions widened) gives the same values.
TEST(PositionServiceTest, CosSinOfLongPromptsCrossChunks) {
  const GoldenCase c = ReadGoldenCase("qwen2_vl", "case_026.json");
  const PositionService service = MakeService(c.model);
  Prompt prompt;
  prompt.sequences = {{Span::Text(3000), Span::Image({1, 56, 80}), Span::Text(3001)},
                      {Span::Text(5)}};
  OutputOptions options;
  options.layout = OutputLayout::kPacked;
  options.cos_sin = true;
  auto wide = service.Compute<int64_t>(prompt, options);
  ASSERT_TRUE(wide.ok()) << wide.status();
  auto narrow = service.Compute<float>(prompt, options);
  ASSERT_TRUE(narrow.ok()) << narrow.status();
  const int64_t tokens = wide->shape[1];
  ASSERT_EQ(tokens, 3000 + 1 + 28 * 40 + 1 + 3001 + 5);
  const int pairs = wide->num_pairs;
  ASSERT_EQ(wide->cos.size(), static_cast<size_t>(tokens * pairs));
  auto spec = BuildRotarySpec(*c.model.rope, RotaryLayout::kNeox, 1 << 16);
  ASSERT_TRUE(spec.ok()) << spec.status();
  for (int64_t i = 0; i < tokens; ++i) {
    for (int j = 0; j < pairs; ++j) {
      const int axis = spec->axis_map.axis[j];
      const CosSin want = PairCosSin(
          spec->inv_freq[j], static_cast<float>(wide->position_ids[axis * tokens + i]), 1.0f);
      ASSERT_EQ(wide->cos[i * pairs + j], want.cos) << i << " " << j;
      ASSERT_EQ(wide->sin[i * pairs + j], want.sin) << i << " " << j;
    }
  }
  EXPECT_EQ(narrow->cos, wide->cos);
  EXPECT_EQ(narrow->sin, wide->sin);
}

// cos/sin of every pair at every returned position: PairCosSin of the pair's axis position.
TEST(PositionServiceTest, CosSinFollowTheAxisMap) {
  for (const char* model : {"qwen2_vl", "qwen3_vl"}) {
    SCOPED_TRACE(model);
    const GoldenCase c = ReadGoldenCase(model, "case_026.json");
    const PositionService service = MakeService(c.model);
    v1::PositionRequest request = c.request;
    request.mutable_options()->set_cos_sin(true);
    request.mutable_options()->set_output_type(v1::PositionOptions::INT32);
    const v1::PositionResponse response = Handle(service, request);
    const int64_t l = response.position_ids().shape(2);
    ASSERT_THAT(response.cos().shape(), ElementsAre(1, l, 64));
    ASSERT_THAT(response.sin().shape(), ElementsAre(1, l, 64));
    auto spec = BuildRotarySpec(*c.model.rope, RotaryLayout::kNeox, 1 << 16);
    ASSERT_TRUE(spec.ok()) << spec.status();
    int distinct_axes = 0;
    for (int64_t i = 0; i < l; ++i) {
      const auto& p = response.position_ids().int32_values();
      distinct_axes += p[i] != p[l + i] || p[l + i] != p[2 * l + i];
      for (int j = 0; j < 64; ++j) {
        const int axis = spec->axis_map.axis[j];
        const CosSin want =
            PairCosSin(spec->inv_freq[j], static_cast<float>(p[axis * l + i]), 1.0f);
        ASSERT_EQ(response.cos().float_values(i * 64 + j), want.cos) << i << " " << j;
        ASSERT_EQ(response.sin().float_values(i * 64 + j), want.sin) << i << " " << j;
      }
    }
    EXPECT_GT(distinct_axes, 0);  // the image's tokens differ across axes
  }
}

TEST(PositionServiceTest, ErrorsNameTheProblem) {
  const PositionService service = PresetService("qwen2_vl");
  struct Case {
    const char* request;
    const char* message;
  };
  const Case kCases[] = {
      {"", "needs exactly one of inputs.input_ids, sequences and a vLLM request "
           "(input_tokens, mm_features), got 0"},
      {"inputs { input_ids { ids: 1 } } sequences { spans { text_tokens: 1 } }", "got 2"},
      {"sequences { spans { text_tokens: 1 } } vllm { input_tokens: 1 }", "got 2"},
      {"inputs { input_ids { ids: [1, 2] } input_ids { ids: 3 } }",
       "inputs.input_ids[1] has 1 entries, expected 2"},
      {"inputs { input_ids { ids: 1 } } options { window_begin: 0 }",
       "window_begin and options.window_end must be given together"},
      {"inputs { input_ids { ids: 1 } } options { window_begin: 3 window_end: 2 }",
       "window [3, 2) must have 0 <= begin < end"},
      {"inputs { input_ids { ids: [1, 151652, 151655, 151653] } image_grid_thw { t: 1 h: 4 w: 4 } }",
       "row 0"},
      {"sequences { spans { kind: AUDIO audio_tokens: 3 } }", "sequences[0]: "},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.request);
    auto request = PositionRequestFromTextproto(c.request);
    ASSERT_TRUE(request.ok()) << request.status();
    auto response = service.Handle(*request);
    ASSERT_FALSE(response.ok()) << c.message;
    EXPECT_THAT(std::string(response.status().message()), HasSubstr(c.message));
  }

  ModelSpec no_rope = service.spec();
  no_rope.rope.reset();
  auto request = PositionRequestFromTextproto("inputs { input_ids { ids: 1 } } options { cos_sin: true }");
  auto response = MakeService(no_rope).Handle(*request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kFailedPrecondition);
}

// One service, 8 threads, mixed requests: every response equals the sequential one.
TEST(PositionServiceTest, ConcurrentUseGivesSequentialResults) {
  const PositionService service = PresetService("qwen2_5_vl_hf");
  std::vector<v1::PositionRequest> requests;
  for (const std::string& file : GoldenCaseFiles("qwen2_5_vl")) {
    v1::PositionRequest request = ReadGoldenCase("qwen2_5_vl", file).request;
    v1::PositionOptions& options = *request.mutable_options();
    switch (requests.size() % 5) {
      case 1:
        options.set_layout(v1::PositionOptions::PACKED);
        break;
      case 2:
        options.set_window_begin(1);
        options.set_window_end(9);
        break;
      case 3:
        options.set_output_type(v1::PositionOptions::INT32);
        options.set_decode_steps(4);
        break;
      case 4:
        options.set_cos_sin(true);
        break;
    }
    requests.push_back(request);
  }
  std::vector<v1::PositionResponse> sequential;
  for (const v1::PositionRequest& request : requests)
    sequential.push_back(Handle(service, request));

  std::atomic<int> mismatches{0};
  std::atomic<int> calls{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (size_t k = 0; k < requests.size(); ++k) {
        const size_t i = (k * 7 + t * 13) % requests.size();
        auto response = service.Handle(requests[i]);
        ++calls;
        if (!response.ok() || !MessageDifferencer::Equals(*response, sequential[i])) ++mismatches;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(calls.load(), 8 * static_cast<int>(requests.size()));
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace mrope
