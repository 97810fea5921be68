// Requests from JSON (proto3 JSON and the golden layout) and text format agree; errors name the
// field or the line.

#include "mrope/service/request_io.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace mrope {
namespace {

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
  const PromptSpan& span = request->sequences(0).spans(0);
  EXPECT_EQ(span.kind(), PromptSpan::VIDEO);
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
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("bad.json: request: "));
}

}  // namespace
}  // namespace mrope
