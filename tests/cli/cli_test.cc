// Runs the `mrope` binary: every golden position case, requests against presets and
// config.json files, every output format, the other commands, and errors (non-zero exit with
// the message on stderr).

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "mrope/model/conventions.h"
#include "proto/mrope.pb.h"
#include "tests/testing/golden_cases.h"

namespace mrope {
namespace {

using ::google::protobuf::Value;
using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

constexpr char kBinary[] = "cli/mrope";

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string TmpPath(const std::string& name) { return std::string(std::getenv("TEST_TMPDIR")) + "/" + name; }

std::string ReadAll(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

// Runs `mrope <args>` (a shell word list; may end in "< file").
CliRun RunMrope(const std::string& args) {
  const std::string out = TmpPath("stdout"), err = TmpPath("stderr");
  const std::string command = absl::StrCat(kBinary, " ", args, " > ", out, " 2> ", err);
  const int status = std::system(command.c_str());
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = ReadAll(out);
  run.err = ReadAll(err);
  return run;
}

Value Json(const std::string& text) {
  auto value = ParseJson(text);
  EXPECT_TRUE(value.ok()) << value.status() << "\n" << text.substr(0, 200);
  return value.ok() ? *value : Value();
}

Value GoldenOutputs(const std::string& path) {
  auto doc = ReadJsonFile(path);
  EXPECT_TRUE(doc.ok()) << doc.status();
  return *FindField(*doc, "outputs");
}

void ExpectSameField(const Value& got, const Value& want, const std::string& key) {
  const Value* a = FindField(got, key);
  const Value* b = FindField(want, key);
  ASSERT_NE(a, nullptr) << key;
  ASSERT_NE(b, nullptr) << key;
  EXPECT_TRUE(MessageDifferencer::Equals(*a, *b)) << key;
}

// `positions --golden` prints the response JSON: its fields must equal the case's `outputs`
// (rope_deltas is what generate() stored: testing::StoredDeltasKey).
void ExpectGoldenOutputs(const Value& got, const Value& want) {
  ExpectSameField(got, want, "position_ids");
  ExpectSameField(got, want, "mrope_position_deltas");
  if (FindField(want, "decode_position_ids") != nullptr) {  // not in the *_hf_v5 folders
    ExpectSameField(got, want, "decode_position_ids");
  }
  const Value* rope_deltas = FindField(got, "rope_deltas");
  ASSERT_NE(rope_deltas, nullptr);
  EXPECT_TRUE(MessageDifferencer::Equals(*rope_deltas,
                                         *FindField(want, testing::StoredDeltasKey(want))));
}

TEST(CliTest, EveryGoldenCase) {
  int cases = 0;
  for (const std::string& key : testing::GoldenPositionKeys()) {
    for (const std::string& file : testing::GoldenCaseFiles(key)) {
      const std::string path = absl::StrCat("tests/golden/", key, "/", file);
      SCOPED_TRACE(path);
      ++cases;
      const CliRun run = RunMrope("positions --golden " + path);
      ASSERT_EQ(run.exit_code, 0) << run.err;
      EXPECT_TRUE(run.err.empty()) << run.err;
      ExpectGoldenOutputs(Json(run.out), GoldenOutputs(path));
    }
  }
  EXPECT_EQ(cases, 383 + 48 + 368 + 224 + 74);  // as in position_service_test
}

// A case without `outputs`, and config.video_time_rounding choosing the rounding.
TEST(CliTest, GoldenCaseWithoutOutputsAndRoundingOverride) {
  auto doc = ReadJsonFile("tests/golden/qwen2_5_vl/case_026.json");
  ASSERT_TRUE(doc.ok());
  auto& fields = *doc->mutable_struct_value()->mutable_fields();
  fields.erase("outputs");
  (*fields["config"].mutable_struct_value()->mutable_fields())["video_time_rounding"]
      .set_string_value("scale_then_truncate");
  std::string text;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(*doc, &text).ok());
  std::ofstream(TmpPath("case.json")) << text;
  const CliRun run = RunMrope("positions --golden=" + TmpPath("case.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // One unpadded row: vLLM's outputs are HF's with scale-then-truncate.
  ExpectGoldenOutputs(Json(run.out), GoldenOutputs("tests/golden/qwen2_5_vl_vllm/case_026.json"));
}

TEST(CliTest, GoldenErrors) {
  std::ofstream(TmpPath("malformed.json")) << "{\"model\": \"qwen2_vl\", \"inputs\": [1,";
  CliRun run = RunMrope("positions --golden=" + TmpPath("malformed.json"));
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.err, HasSubstr("malformed JSON"));
  EXPECT_TRUE(run.out.empty());

  std::ofstream(TmpPath("family.json")) << R"({"model": "qwen9_vl", "inputs": {"input_ids": [[1]]}})";
  run = RunMrope("positions --golden=" + TmpPath("family.json"));
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.err, HasSubstr("unknown preset 'qwen9_vl'"));

  run = RunMrope("positions --golden=" + TmpPath("no_such_case.json"));
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.err, HasSubstr("no_such_case.json"));
}

// --config + --request: a golden case file is a valid request; presets and config.json agree.
TEST(CliTest, RequestsAgainstPresetsAndConfigFiles) {
  const std::string path = "tests/golden/qwen2_vl/case_008.json";  // 3 padded rows
  const Value want = GoldenOutputs(path);
  for (const std::string config :
       {"qwen2_vl", "examples/configs/Qwen2-VL-7B-Instruct.json"}) {
    SCOPED_TRACE(config);
    const CliRun run = RunMrope("positions --config=" + config + " --request=" + path);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const Value got = Json(run.out);
    ExpectSameField(got, want, "position_ids");
    ExpectSameField(got, want, "mrope_position_deltas");
  }
  // HF v4's video time rounding needs the qwen2_5_vl_hf preset (or --video_time_rounding).
  const std::string video = "tests/golden/qwen2_5_vl/case_026.json";
  for (const std::string flags : {"--config=qwen2_5_vl_hf",
                                  "--config=examples/configs/Qwen2.5-VL-7B-Instruct.json "
                                  "--video_time_rounding=truncate_interval_first"}) {
    SCOPED_TRACE(flags);
    const CliRun run = RunMrope("positions " + flags + " --request=" + video);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    ExpectSameField(Json(run.out), GoldenOutputs(video), "position_ids");
  }
  // stdin.
  const CliRun run = RunMrope("positions --config=qwen2_vl --request=- < " + path);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ExpectSameField(Json(run.out), want, "position_ids");
}

TEST(CliTest, OutputFormats) {
  const std::string path = "tests/golden/qwen3_vl/case_006.json";  // I1x48x2, one row
  auto ids = AsInt64Array(*FindField(GoldenOutputs(path), "position_ids"), "position_ids");
  ASSERT_TRUE(ids.ok());
  const std::string request = " --config=qwen3_vl --request=" + path;

  CliRun run = RunMrope("positions" + request + " --format=int32 --output=" + TmpPath("pos.bin"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string bytes = ReadAll(TmpPath("pos.bin"));
  ASSERT_EQ(bytes.size(), ids->size() * sizeof(int32_t));
  for (size_t i = 0; i < ids->size(); ++i) {
    int32_t v;
    std::memcpy(&v, bytes.data() + i * sizeof(v), sizeof(v));
    ASSERT_EQ(v, (*ids)[i]) << i;
  }
  run = RunMrope("positions" + request + " --format=int64 --output=" + TmpPath("pos64.bin"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(ReadAll(TmpPath("pos64.bin")).size(), ids->size() * sizeof(int64_t));

  run = RunMrope("positions" + request + " --format=textproto");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  v1::PositionResponse response;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(run.out, &response));
  EXPECT_EQ(response.output_type(), v1::PositionOptions::INT64);
  EXPECT_EQ(std::vector<int64_t>(response.position_ids().int64_values().begin(),
                                 response.position_ids().int64_values().end()),
            *ids);

  run = RunMrope("positions" + request + " --format=int32");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.err, HasSubstr("--format=int32 writes binary: give --output=FILE"));
  run = RunMrope("positions" + request + " --format=yaml");
  EXPECT_THAT(run.err, HasSubstr("--format must be json, textproto, int32 or int64"));
}

// --cp_size / --cp_rank: each rank's positions are the whole prompt's at its cp_token_index.
TEST(CliTest, ContextParallelSlices) {
  const std::string request = TmpPath("cp_request.json");
  std::ofstream(request) << R"({"inputs": {"input_ids": [[11, 12, 13, 151652, 151655, 151655,)"
                         << R"( 151655, 151655, 151653, 14, 15, 16]],)"
                         << R"( "image_grid_thw": [[1, 4, 4]]}})";
  CliRun run = RunMrope("positions --config=qwen2_vl --request=" + request);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto whole = AsInt64Array(*FindField(Json(run.out), "position_ids"), "position_ids");
  ASSERT_TRUE(whole.ok() && whole->size() == 36u);
  std::vector<int> held(12, 0);
  for (int rank = 0; rank < 3; ++rank) {
    run = RunMrope(absl::StrCat("positions --config=qwen2_vl --request=", request,
                                " --cp_size=3 --cp_rank=", rank));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const Value got = Json(run.out);
    auto ids = AsInt64Array(*FindField(got, "position_ids"), "position_ids");
    auto index = AsInt64Array(*FindField(got, "cp_token_index"), "cp_token_index");
    auto cu_seqlens = AsInt64Array(*FindField(got, "cu_seqlens"), "cu_seqlens");
    ASSERT_TRUE(ids.ok() && index.ok() && cu_seqlens.ok());
    ASSERT_EQ(ids->size(), 12u);
    ASSERT_EQ(index->size(), 4u);
    EXPECT_EQ(*cu_seqlens, (std::vector<int64_t>{0, 4}));
    for (int j = 0; j < 4; ++j) {
      ++held[(*index)[j]];
      for (int axis = 0; axis < 3; ++axis) {
        EXPECT_EQ((*ids)[axis * 4 + j], (*whole)[axis * 12 + (*index)[j]]);
      }
    }
  }
  EXPECT_EQ(held, std::vector<int>(12, 1));

  run = RunMrope("positions --config=qwen2_vl --request=" + request + " --cp_size=2 --cp_rank=2");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("cp_rank=2 must be in [0, cp_size=2)"));
  run = RunMrope("positions --config=qwen2_vl --request=" + request + " --cp_size=5");
  EXPECT_THAT(run.err, HasSubstr("padded length 12 must be a multiple of 2 * cp_size = 10"));
  run = RunMrope("positions --config=qwen2_vl --request=" + request + " --cp_rank=1");
  EXPECT_THAT(run.err, HasSubstr("--cp_rank=1 needs --cp_size"));
}

// HunYuan-VL's four axes: the ranks slice them too.
TEST(CliTest, ContextParallelSlicesOfFourAxes) {
  const std::string request = TmpPath("cp_hunyuan_request.json");
  std::ofstream(request) << R"({"inputs": {"input_ids": [[7, 120118, 120120, 120120, 120120,)"
                         << R"( 120120, 120120, 120120, 120119, 8, 9, 10]],)"
                         << R"( "mm_token_type_ids": [[0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0]],)"
                         << R"( "image_grid_thw": [[1, 4, 2]]}})";
  CliRun run = RunMrope("positions --config=hunyuan_vl --request=" + request);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto whole = AsInt64Array(*FindField(Json(run.out), "position_ids"), "position_ids");
  ASSERT_TRUE(whole.ok() && whole->size() == 48u);
  std::vector<int> held(12, 0);
  for (int rank = 0; rank < 2; ++rank) {
    run = RunMrope(absl::StrCat("positions --config=hunyuan_vl --request=", request,
                                " --cp_size=2 --cp_rank=", rank));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const Value got = Json(run.out);
    auto ids = AsInt64Array(*FindField(got, "position_ids"), "position_ids");
    auto index = AsInt64Array(*FindField(got, "cp_token_index"), "cp_token_index");
    ASSERT_TRUE(ids.ok() && index.ok());
    ASSERT_EQ(ids->size(), 24u);
    ASSERT_EQ(index->size(), 6u);
    for (int j = 0; j < 6; ++j) {
      ++held[(*index)[j]];
      for (int axis = 0; axis < 4; ++axis) {
        EXPECT_EQ((*ids)[axis * 6 + j], (*whole)[axis * 12 + (*index)[j]]);
      }
    }
  }
  EXPECT_EQ(held, std::vector<int>(12, 1));
}

TEST(CliTest, ExplainTablesAndRotary) {
  CliRun run = RunMrope("explain --golden=tests/golden/qwen2_5_vl/case_026.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("t of each temporal grid: 4, 8, 12"));
  run = RunMrope("explain --config=qwen2_5_vl --request=tests/golden/qwen2_5_vl/case_026.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("t of each temporal grid: 4, 9, 14"));  // scale-then-truncate

  run = RunMrope("tables --config=qwen3_vl --positions=0,12:3:4");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("mrope_section [24, 20, 20] interleaved"));
  EXPECT_THAT(run.out, HasSubstr("q/k norm before the rotary: weight\n"));
  EXPECT_THAT(run.out, HasSubstr("cos@12:3:4"));
  run = RunMrope("tables --config=qwen2_vl --positions=7 --format=json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Value tables = Json(run.out);
  auto axes = AsInt64Array(*FindField(tables, "axis_map"), "axis_map");
  ASSERT_TRUE(axes.ok());
  ASSERT_EQ(axes->size(), 64u);
  EXPECT_EQ((*axes)[15], 0);
  EXPECT_EQ((*axes)[16], 1);
  EXPECT_EQ((*axes)[40], 2);
  run = RunMrope("tables --config=qwen2_vl --positions=1:x");
  EXPECT_THAT(run.err, HasSubstr("--positions: '1:x' is not T or T:H:W"));
  // Cohere Compass: a rotary per layer type, picked by --layer_type.
  run = RunMrope("tables --config=cohere_compass --positions=5");
  EXPECT_THAT(run.err, HasSubstr("rotary per layer type (sliding_attention, full_attention)"));
  run = RunMrope("tables --config=cohere_compass --layer_type=sliding_attention --positions=5");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("cohere_compass [sliding_attention]: head_dim 128"));
  run = RunMrope("tables --config=cohere_compass --layer_type=full_attention --positions=5");
  EXPECT_THAT(run.err, HasSubstr("no rotary parameters (positions only)"));
  run = RunMrope("tables --config=qwen2_vl --layer_type=sliding_attention");
  EXPECT_THAT(run.err, HasSubstr("--layer_type 'sliding_attention': model 'qwen2_vl' has one "
                                 "rotary for all its layers"));

  run = RunMrope("rotary --golden=tests/golden/rotary_qwen3_vl/case_001.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(FindField(Json(run.out), "q_rot"), nullptr);
}

// explain --compare: the golden README's examples of train/serve skew, with the exit status a
// pipeline asserts on.
TEST(CliTest, ExplainCompareShowsWhereConventionsDiverge) {
  // qwen2_5_vl/case_026: HF steps the video by 4 (delta +45), vLLM by 5 (delta +60).
  CliRun run = RunMrope(
      "explain --compare=hf_v4,vllm --golden=tests/golden/qwen2_5_vl/case_026.json");
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_THAT(run.out, HasSubstr("hf_v4: delta 45, first decode position (69, 69, 69)"));
  EXPECT_THAT(run.out, HasSubstr("vllm: delta 60, first decode position (84, 84, 84)"));
  EXPECT_THAT(run.out, HasSubstr("first divergence: token 5: hf_v4 (8, 4, 4) vllm (9, 4, 4)"));
  EXPECT_THAT(run.out, HasSubstr("diverging by the rules:\n  images step t: by 0"));
  EXPECT_THAT(run.out, HasSubstr("video time is: k * trunc(seconds per grid)"));
  EXPECT_THAT(run.out, HasSubstr("conventions disagree"));

  // qwen2_5_vl_vllm_mm_features/case_010, a vLLM request compared as its one-row batch: vLLM
  // gives delta 28 and continues at 42, transformers v5 delta 20, v4.57.6 delta 21.
  run = RunMrope("explain --compare=hf_v4,hf_v5,vllm "
                 "--golden=tests/golden/qwen2_5_vl_vllm_mm_features/case_010.json");
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_THAT(run.out, HasSubstr("hf_v4: delta 21"));
  EXPECT_THAT(run.out, HasSubstr("hf_v5: delta 20"));
  EXPECT_THAT(run.out, HasSubstr("vllm: delta 28, first decode position (42, 42, 42)"));
  // qwen2_vl_hf_v5/case_006: v5 resumes after the video at 9 + 8/2 = 13, v4 at 25.
  run = RunMrope("explain --compare=hf_v4,hf_v5 "
                 "--golden=tests/golden/qwen2_vl_hf_v5/case_006.json");
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_THAT(run.out, HasSubstr("first divergence: token 73: hf_v4 (25, 25, 25) hf_v5 "
                                 "(13, 13, 13)\ndiverging by the rule:\n  text after a vision "
                                 "block resumes at: the block's max + 1 (hf_v4); its start + "
                                 "max(h, w)/merge (hf_v5)"));
  // Qwen3-VL: vLLM equals transformers v5 on the same tokens (the golden README).
  run = RunMrope("explain --compare=hf_v5,vllm "
                 "--golden=tests/golden/qwen3_vl_vllm_mm_features/case_005.json");
  EXPECT_EQ(run.exit_code, 0) << run.err << run.out;

  // A text-only prompt: every convention agrees.
  run = RunMrope("explain --compare=hf_v4,hf_v5_2,vllm --config=qwen2_vl "
                 "--request=tests/cli/testdata/text_only.json");
  EXPECT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_THAT(run.out, HasSubstr("conventions agree"));

  run = RunMrope("explain --compare=hf_v4 --config=qwen2_vl "
                 "--request=tests/cli/testdata/text_only.json");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("--compare needs at least two conventions, got 1"));
}

// An EVS request: explain names the vLLM defect and the tokens it moves.
TEST(CliTest, ExplainNamesVllmEvsDefects) {
  const CliRun run = RunMrope("explain --golden=tests/golden/qwen3_vl_vllm_evs/case_001.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("mm_features[0]: vLLM rule E5: vLLM writes its 37 positions at "
                                 "tokens [3, 40) instead of its placeholder [10, 47)"));
}

// `mrope conventions` lists the release table; --convention takes a release.
TEST(CliTest, ConventionsByRelease) {
  CliRun run = RunMrope("conventions");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("qwen2_5_vl       transformers-5.18  hf_v5_18, "
                                 "qwen2_5_vl_hf_v5_18"));
  EXPECT_THAT(run.out, HasSubstr("transformers 5.18.0 to 5.23.0"));
  run = RunMrope("conventions --format=json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Value listed = Json(run.out);
  ASSERT_TRUE(listed.has_list_value());
  EXPECT_EQ(static_cast<size_t>(listed.list_value().values_size()),
            ConventionReleases().size());
  const Value& first = listed.list_value().values(0);
  EXPECT_EQ(FindField(first, "family")->string_value(), "qwen2_vl");
  EXPECT_EQ(FindField(first, "reference")->string_value(), "transformers");
  // transformers 4.57.6 truncates Qwen2.5-VL's video interval first: the release brings its
  // rounding with it (qwen2_5_vl_hf's golden outputs).
  const std::string video = "tests/golden/qwen2_5_vl/case_026.json";
  run = RunMrope("positions --config=qwen2_5_vl --convention=transformers==4.57.6 --request=" +
                 video);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ExpectSameField(Json(run.out), GoldenOutputs(video), "position_ids");
  run = RunMrope("positions --config=qwen3_5 --convention=transformers==5.24.0 --request=x");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("--convention: transformers 5.24.0 is not a release mrope has "
                                 "verified for qwen3_5; verified: "));
  run = RunMrope("conventions --format=yaml");
  EXPECT_THAT(run.err, HasSubstr("conventions: --format must be text, json or markdown, got "
                                 "'yaml'"));
  // The README's table is `mrope conventions --format=markdown` (one fact in one place).
  run = RunMrope("conventions --format=markdown");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(ReadAll("README.md"), HasSubstr(run.out))
      << "README.md's \"Conventions by release\" table is stale: replace it with the output of "
         "`mrope conventions --format=markdown`";
}

TEST(CliTest, UsageErrors) {
  CliRun run = RunMrope("");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("expected exactly one command"));
  run = RunMrope("position --golden=x");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("unknown command 'position'"));
  run = RunMrope("positions --request=x.json");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("--config is required"));
  run = RunMrope("positions --config=qwen2_vl");
  EXPECT_THAT(run.err, HasSubstr("--request is required"));
  run = RunMrope("positions --config=qwen2_vl --request=x --golden=y");
  EXPECT_THAT(run.err, HasSubstr("--golden takes the model and the prompt from the case"));
  run = RunMrope("positions --config=qwen5 --request=x");
  EXPECT_THAT(run.err, HasSubstr("'qwen5' is neither a config file nor a preset"));
  run = RunMrope("positions --config=qwen2_5_vl --convention=sglang --request=x");
  EXPECT_THAT(run.err, HasSubstr("--convention: unknown convention 'sglang'; known: "
                                 "transformers-"));
  EXPECT_THAT(run.err, HasSubstr("transformers-5.3, transformers-5.18, vllm-0.33, hf_v4, hf_v5_2, "
                                 "hf_v5, hf_v5_18, vllm, hf"));
  run = RunMrope("--help");
  EXPECT_THAT(run.out + run.err, HasSubstr("usage: mrope <command> [flags]"));
  EXPECT_THAT(run.out + run.err,
              HasSubstr("presets (--config):\n  qwen2_vl, qwen2_vl_hf_v5_2, qwen2_vl_hf_v5, "
                        "qwen2_vl_vllm, qwen2_5_vl, qwen2_5_vl_hf, "));
  run = RunMrope("positions --request=x");
  EXPECT_THAT(run.err, HasSubstr("--config is required: a preset (qwen2_vl, "));
  EXPECT_THAT(run.err, HasSubstr("openpangu_vl, isaac, keye, cohere_compass, cohere_compass_vllm, "
                                 "hunyuan_vl) or a model's config.json"));
}

}  // namespace
}  // namespace mrope
