// Requests from JSON (proto3 JSON and the golden layout) and text format agree; errors name the
// field or the line.

#include "mrope/service/request_io.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "mrope/service/position_service.h"
#include "tests/testing/golden_cases.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;
using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

constexpr char kGoldenLayout[] = R"({
  "inputs": {
    "input_ids": [[151643, 7, 151652, 151655, 151653], [5, 6, 151652, 151655, 151653]],
    "attention_mask": [[0, 1, 1, 1, 1], [1, 1, 1, 1, 1]],
    "image_grid_thw": [[1, 2, 2], [1, 2, 2]],
    "video_grid_thw": null,
    "second_per_grid_ts": null
  },
  "options": {"output_type": "INT32", "layout": "PACKED", "decode_steps": 2}
})";

constexpr char kProtoJson[] = R"({
  "inputs": {
    "input_ids": [{"ids": [151643, 7, 151652, 151655, 151653]},
                  {"ids": [5, 6, 151652, 151655, 151653]}],
    "attention_mask": [{"ids": [0, 1, 1, 1, 1]}, {"ids": [1, 1, 1, 1, 1]}],
    "image_grid_thw": [{"t": 1, "h": 2, "w": 2}, {"t": 1, "h": 2, "w": 2}]
  },
  "options": {"outputType": "INT32", "layout": "PACKED", "decodeSteps": "2"}
})";

constexpr char kTextproto[] = R"pb(
  # The same request in text format.
  inputs {
    input_ids { ids: [ 151643, 7, 151652, 151655, 151653 ] }
    input_ids { ids: [ 5, 6, 151652, 151655, 151653 ] }
    attention_mask { ids: [ 0, 1, 1, 1, 1 ] }
    attention_mask { ids: [ 1, 1, 1, 1, 1 ] }
    image_grid_thw { t: 1 h: 2 w: 2 }
    image_grid_thw { t: 1 h: 2 w: 2 }
  }
  options { output_type: INT32 layout: PACKED decode_steps: 2 }
)pb";

TEST(RequestIoTest, GoldenLayoutProtoJsonAndTextprotoAgree) {
  auto golden = PositionRequestFromJson(kGoldenLayout);
  auto proto_json = PositionRequestFromJson(kProtoJson);
  auto text = PositionRequestFromTextproto(kTextproto);
  ASSERT_TRUE(golden.ok()) << golden.status();
  ASSERT_TRUE(proto_json.ok()) << proto_json.status();
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_TRUE(MessageDifferencer::Equals(*golden, *text));
  EXPECT_TRUE(MessageDifferencer::Equals(*proto_json, *text));
  EXPECT_EQ(text->inputs().input_ids(1).ids(1), 6);
  EXPECT_EQ(text->inputs().image_grid_thw(1).h(), 2);
}

TEST(RequestIoTest, GoldenMetadataIsIgnoredAndSpanGridsMayBeTriples) {
  auto request = PositionRequestFromJson(R"({
    "format": "qwen-mrope-golden/v2", "kind": "position", "model": "qwen2_vl",
    "case": "case_001", "tags": ["one_image"], "layout": ["T1"], "batch_size": 1,
    "seq_len": 1, "source": {}, "config": {"image_token_id": 1}, "outputs": {},
    "inputs": {"input_ids": [[42]]},
    "sequences": [{"spans": [{"kind": "VIDEO", "grid": [2, 4, 6], "seconds_per_grid": 0.5}]}]
  })");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->inputs().input_ids(0).ids(0), 42);
  const v1::PromptSpan& span = request->sequences(0).spans(0);
  EXPECT_EQ(span.kind(), v1::PromptSpan::VIDEO);
  EXPECT_EQ(span.grid().t(), 2);
  EXPECT_EQ(span.grid().w(), 6);
  EXPECT_EQ(span.seconds_per_grid(), 0.5f);
}

TEST(RequestIoTest, ErrorsNameTheProblem) {
  auto unknown = PositionRequestFromJson(R"({"inputs": {"input_idz": [[1]]}})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("input_idz"));

  auto grid = PositionRequestFromJson(R"({"inputs": {"image_grid_thw": [[1, 2]]}})");
  EXPECT_THAT(std::string(grid.status().message()),
              HasSubstr("inputs.image_grid_thw[0]: expected [t, h, w], got 2 numbers"));

  auto malformed = PositionRequestFromJson(R"({"inputs": )");
  EXPECT_THAT(std::string(malformed.status().message()), HasSubstr("malformed JSON"));

  auto not_object = PositionRequestFromJson("[1, 2]");
  EXPECT_THAT(std::string(not_object.status().message()), HasSubstr("expected a JSON object"));

  auto text = PositionRequestFromTextproto("inputs {\n  input_ids { idz: 1 }\n}\n");
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("request:2:"));
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("idz"));
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("Accepted fields: ids."));
}

TEST(RequestIoTest, ReadsFilesByExtensionOrContent) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  const std::pair<std::string, const char*> files[] = {
      {dir + "/request.json", kGoldenLayout},
      {dir + "/request.textproto", kTextproto},
      {dir + "/request_json_content", kProtoJson},
      {dir + "/request_text_content", kTextproto},
  };
  auto reference = PositionRequestFromTextproto(kTextproto);
  ASSERT_TRUE(reference.ok());
  for (const auto& [path, content] : files) {
    SCOPED_TRACE(path);
    std::ofstream(path) << content;
    auto request = ReadPositionRequest(path);
    ASSERT_TRUE(request.ok()) << request.status();
    EXPECT_TRUE(MessageDifferencer::Equals(*request, *reference));
  }
  std::ofstream(dir + "/bad.json") << "{\"inputs\": 3}";
  auto bad = ReadPositionRequest(dir + "/bad.json");
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("bad.json: inputs: expected an object, got a number"));
}

// What an HF processor returns, dumped with json.dump: the inputs at the top level.
TEST(RequestIoTest, BareProcessorOutputIsTheInputs) {
  auto bare = PositionRequestFromJson(R"({
    "input_ids": [[151643, 7, 151652, 151655, 151653], [5, 6, 151652, 151655, 151653]],
    "attention_mask": [[0, 1, 1, 1, 1], [1, 1, 1, 1, 1]],
    "image_grid_thw": [[1, 2, 2], [1, 2, 2]],
    "options": {"output_type": "INT32", "layout": "PACKED", "decode_steps": 2}
  })");
  auto reference = PositionRequestFromTextproto(kTextproto);
  ASSERT_TRUE(bare.ok()) << bare.status();
  ASSERT_TRUE(reference.ok());
  EXPECT_TRUE(MessageDifferencer::Equals(*bare, *reference));

  auto both = PositionRequestFromJson(R"({"input_ids": [[1]], "inputs": {"input_ids": [[1]]}})");
  EXPECT_THAT(std::string(both.status().message()),
              HasSubstr("given both under 'inputs' and at the top level"));
}

// A golden case's inputs as an Omni processor returns them (json.dump of its BatchFeature):
// at the top level, feature_attention_mask (each audio's row of ones, padded with zeros to the
// longest) instead of audio_feature_lengths, and the pixel and feature tensors.
std::string OmniProcessorOutput(const std::string& case_path) {
  std::ifstream in(case_path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto golden = ParseJson(text);
  EXPECT_TRUE(golden.ok()) << golden.status();
  google::protobuf::Struct inputs = golden->struct_value().fields().at("inputs").struct_value();
  auto& fields = *inputs.mutable_fields();
  std::vector<int64_t> lengths;
  if (fields.count("audio_feature_lengths") && fields["audio_feature_lengths"].has_list_value()) {
    for (const Value& x : fields["audio_feature_lengths"].list_value().values()) {
      lengths.push_back(static_cast<int64_t>(x.number_value()));
    }
  }
  fields.erase("audio_feature_lengths");
  const int64_t max_frames = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
  for (const int64_t length : lengths) {
    Value& row = *fields["feature_attention_mask"].mutable_list_value()->add_values();
    for (int64_t i = 0; i < max_frames + 7; ++i) {
      row.mutable_list_value()->add_values()->set_number_value(i < length ? 1 : 0);
    }
  }
  for (const char* tensor : {"pixel_values", "pixel_values_videos", "input_features"}) {
    Value& rows = fields[tensor];
    for (int r = 0; r < 3; ++r) {
      Value& row = *rows.mutable_list_value()->add_values();
      for (int i = 0; i < 4; ++i) row.mutable_list_value()->add_values()->set_number_value(i - 1.5);
    }
  }
  std::string json;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(inputs, &json).ok());
  return json;
}

TEST(RequestIoTest, OmniProcessorOutputGivesTheGoldenPositions) {
  int with_audio = 0;
  for (const std::string key : {"qwen2_5_omni", "qwen3_omni"}) {
    for (const std::string& file : testing::GoldenCaseFiles(key)) {
      const testing::GoldenCase c = testing::ReadGoldenCase(key, file);
      SCOPED_TRACE(c.path);
      const std::string json = OmniProcessorOutput(c.path);
      auto request = PositionRequestFromJson(json);
      ASSERT_TRUE(request.ok()) << request.status();
      with_audio += c.request.inputs().audio_feature_lengths_size() > 0;
      auto service = PositionService::Create(c.model);
      ASSERT_TRUE(service.ok()) << service.status();
      auto response = service->Handle(*request);
      ASSERT_TRUE(response.ok()) << response.status();
      std::vector<int64_t> shape;
      EXPECT_EQ(testing::ArrayValues(response->position_ids()),
                testing::OutputValues(c.outputs, "position_ids", &shape));
    }
  }
  EXPECT_GE(with_audio, 30);  // 33 of the 128 Omni cases have audio (the mask is exercised)
}

TEST(RequestIoTest, FeatureAttentionMaskIsCheckedRowByRow) {
  auto lengths = PositionRequestFromJson(
      R"({"input_ids": [[1]], "feature_attention_mask": [[1, 1, 1, 0], [1, 1, 1, 1], [0, 0]]})");
  ASSERT_TRUE(lengths.ok()) << lengths.status();
  EXPECT_THAT(lengths->inputs().audio_feature_lengths(), ::testing::ElementsAre(3, 4, 0));
  auto value = PositionRequestFromJson(R"({"feature_attention_mask": [[1, 1], [1, 2]]})");
  EXPECT_EQ(std::string(value.status().message()),
            "feature_attention_mask[1][1]: expected an integer in [0, 1], got 2");
  auto hole = PositionRequestFromJson(R"({"feature_attention_mask": [[1, 1, 0, 1]]})");
  EXPECT_EQ(std::string(hole.status().message()),
            "feature_attention_mask[0][3]: got 1 after a 0 at index 2; a row must be ones then "
            "zeros (HF uses its sum as the audio's length)");
  auto both = PositionRequestFromJson(
      R"({"inputs": {"audio_feature_lengths": [3], "feature_attention_mask": [[1, 1, 1]]}})");
  EXPECT_EQ(std::string(both.status().message()),
            "inputs.feature_attention_mask: audio_feature_lengths and feature_attention_mask are "
            "both given; give one");
  // Processor tensors are skipped, but still read as JSON.
  auto pixels = PositionRequestFromJson(R"({"input_ids": [[1]], "pixel_values": [[0.5, 1e-3]]})");
  EXPECT_TRUE(pixels.ok()) << pixels.status();
  auto broken = PositionRequestFromJson(R"({"input_ids": [[1]], "pixel_values": [[0.5, 1e]]})");
  EXPECT_THAT(std::string(broken.status().message()), HasSubstr("pixel_values[0][1]: malformed JSON"));
}

// A vLLM request in its proto3 JSON form ("vllm") and in the golden cases' (under "inputs").
TEST(RequestIoTest, VllmRequestsInBothForms) {
  auto nested = PositionRequestFromJson(R"({"vllm": {"input_tokens": [1, 2, 3],
      "mm_features": [{"modality": "video", "mm_position": {"offset": 1, "length": 1},
                       "data": {"video_grid_thw": [1, 2, 2], "second_per_grid_ts": 0.5}}],
      "evs": {"keep_masks": [[1]], "embed_dtype": "float32", "video_pruning_rate": 0.25}}})");
  ASSERT_TRUE(nested.ok()) << nested.status();
  const v1::VllmPrompt& v = nested->vllm();
  EXPECT_EQ(v.input_tokens_size(), 3);
  EXPECT_EQ(v.mm_features(0).modality(), v1::VllmFeature::VIDEO);
  EXPECT_EQ(v.mm_features(0).mm_position().offset(), 1);
  EXPECT_EQ(v.mm_features(0).data().video_grid_thw().w(), 2);
  EXPECT_EQ(v.mm_features(0).data().second_per_grid_ts(), 0.5f);
  EXPECT_EQ(v.evs().embed_dtype(), v1::VllmEvs::FLOAT32);
  EXPECT_EQ(v.evs().video_pruning_rate(), 0.25);
  auto golden = PositionRequestFromJson(R"({"inputs": {"input_tokens": [1, 2, 3],
      "mm_features": [], "keep_masks": [[1]], "embed_dtype": "bfloat16"}})");
  ASSERT_TRUE(golden.ok()) << golden.status();
  EXPECT_TRUE(golden->vllm().has_evs());
  auto bad = PositionRequestFromJson(
      R"({"vllm": {"mm_features": [{"modality": "audio"}]}})");
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("expected one of IMAGE, VIDEO, got audio"));
  auto unknown = PositionRequestFromJson(R"({"vllm": {"evs": {"mask": []}}})");
  EXPECT_THAT(std::string(unknown.status().message()),
              HasSubstr("unknown key 'mask'; accepted keys: keep_masks, embed_dtype"));
}

TEST(RequestIoTest, UnknownKeysAreNamedWithTheAcceptedOnes) {
  auto pixels = PositionRequestFromJson(R"({"input_ids": [[1]], "pixel_value": [[0.5]]})");
  EXPECT_EQ(std::string(pixels.status().message()),
            "unknown key 'pixel_value'; accepted keys: inputs, sequences, options, vllm, "
            "input_ids, attention_mask, image_grid_thw, video_grid_thw, second_per_grid_ts, "
            "video_second_per_grid, audio_feature_lengths, feature_attention_mask, "
            "use_audio_in_video, pixel_values, pixel_values_videos, input_features, "
            "mm_token_type_ids, video_timestamps, images_per_sample, input_tokens, mm_features, "
            "keep_masks, embed_dtype, video_pruning_rate, unpruned_input_ids");
  auto span = PositionRequestFromJson(R"({"sequences": [{"spans": [{"knd": "TEXT"}]}]})");
  EXPECT_EQ(std::string(span.status().message()),
            "sequences[0].spans[0]: unknown key 'knd'; accepted keys: kind, text_tokens, grid, "
            "seconds_per_grid, audio_tokens, open");
  auto kind = PositionRequestFromJson(R"({"sequences": [{"spans": [{"kind": "PICTURE"}]}]})");
  EXPECT_EQ(std::string(kind.status().message()),
            "sequences[0].spans[0].kind: expected one of TEXT, IMAGE, VIDEO, AUDIO, "
            "AUDIO_IN_VIDEO, got PICTURE");
}

TEST(RequestIoTest, NumbersAreCheckedWithTheirPath) {
  auto negative = PositionRequestFromJson(R"({"input_ids": [[1, 2], [3, -100]]})");
  EXPECT_EQ(std::string(negative.status().message()),
            "input_ids[1][1]: expected an integer in [0, 4611686018427387904], got -100");
  auto huge = PositionRequestFromJson(R"({"inputs": {"input_ids": [[1e30]]}})");
  EXPECT_EQ(std::string(huge.status().message()),
            "inputs.input_ids[0][0]: expected an integer in [0, 4611686018427387904], got 1e30");
  auto mask = PositionRequestFromJson(R"({"inputs": {"attention_mask": [[1, 2]]}})");
  EXPECT_EQ(std::string(mask.status().message()),
            "inputs.attention_mask[0][1]: expected an integer in [0, 1], got 2");
  auto grid = PositionRequestFromJson(R"({"inputs": {"video_grid_thw": [[1, 2.5, 2]]}})");
  EXPECT_THAT(std::string(grid.status().message()),
              HasSubstr("inputs.video_grid_thw[0][1]: expected an integer"));
  auto seconds = PositionRequestFromJson(R"({"inputs": {"second_per_grid_ts": [1e999]}})");
  EXPECT_EQ(std::string(seconds.status().message()),
            "inputs.second_per_grid_ts[0]: expected a finite number, got 1e999");
  auto enum_number = PositionRequestFromJson(R"({"options": {"layout": 1, "decodeSteps": "3"}})");
  ASSERT_TRUE(enum_number.ok()) << enum_number.status();
  EXPECT_EQ(enum_number->options().layout(), v1::PositionOptions::PACKED);
  EXPECT_EQ(enum_number->options().decode_steps(), 3);
}

TEST(RequestIoTest, SizesAreRefusedWhileReading) {
  PositionLimits limits;
  limits.max_tokens_per_row = 4;
  limits.max_batch_rows = 2;
  auto long_row = PositionRequestFromJson(R"({"input_ids": [[1, 2, 3, 4, 5, 6, 7]]})", limits);
  EXPECT_EQ(std::string(long_row.status().message()), "input_ids[0]: more than 4 items");
  auto rows = PositionRequestFromJson(R"({"input_ids": [[1], [2], [3]]})", limits);
  EXPECT_EQ(std::string(rows.status().message()), "input_ids: more than 2 rows");

  // 2^20 + 1 tokens in one row (the default per-row limit): refused at the first token over.
  std::string big = "{\"input_ids\": [[";
  for (int64_t i = 0; i <= PositionLimits().max_tokens_per_row; ++i) big += "151655, ";
  big += "1]]}";
  auto too_long = PositionRequestFromJson(big);
  EXPECT_EQ(std::string(too_long.status().message()), "input_ids[0]: more than 1048576 items");
}

TEST(RequestIoTest, DeepNestingIsRefusedNamingTheDepth) {
  // In a key that is read: a type error at the first level too deep.
  const std::string deep_ids =
      "{\"input_ids\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
  EXPECT_EQ(std::string(PositionRequestFromJson(deep_ids).status().message()),
            "input_ids[0][0]: expected an integer, got an array");
  // In a key that is skipped (a golden file's outputs): the depth limit.
  const std::string deep_outputs =
      "{\"outputs\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
  const std::string message(PositionRequestFromJson(deep_outputs).status().message());
  EXPECT_THAT(message, HasSubstr("arrays and objects nest deeper than 64 levels"));
  EXPECT_THAT(message, HasSubstr("outputs[0][0]"));
}

}  // namespace
}  // namespace mrope
