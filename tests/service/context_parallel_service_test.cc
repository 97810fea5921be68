// Context-parallel requests (options.cp_size / cp_rank, proto/mrope.proto): every rank's
// positions equal the whole request's positions at its cp_token_index, bit for bit, and the
// ranks together hold every token once; in the padded (the batch as given, left padding too)
// and packed layouts, for explicit spans, token-id batches and a vLLM request (EVS-pruned ones
// refused); JSON requests and responses carry the fields; errors name them.

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/service/position_service.h"
#include "mrope/service/request_io.h"
#include "mrope/service/response_json.h"
#include "tests/testing/golden_cases.h"
#include "tests/testing/service_testing.h"

namespace mrope {
namespace {

using ::mrope::testing::GoldenCase;
using ::mrope::testing::ReadGoldenCase;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Three samples of 40, 40 and 64 tokens (text; text + image + text; text + video + text).
constexpr char kSamples[] = R"({"sequences": [
    {"spans": [{"kind": "TEXT", "text_tokens": 40}]},
    {"spans": [{"kind": "TEXT", "text_tokens": 5}, {"kind": "IMAGE", "grid": [1, 8, 12]},
               {"kind": "TEXT", "text_tokens": 9}]},
    {"spans": [{"kind": "TEXT", "text_tokens": 3},
               {"kind": "VIDEO", "grid": [4, 6, 8], "seconds_per_grid": 2.0},
               {"kind": "TEXT", "text_tokens": 11}]}]})";

// Qwen2-VL ids, no padding: an image prompt and a text row of 12 tokens each.
constexpr char kIdBatch[] = R"({"inputs": {
    "input_ids": [[11, 12, 13, 151652, 151655, 151655, 151655, 151655, 151653, 14, 15, 16],
                  [21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32]],
    "image_grid_thw": [[1, 4, 4]]}})";

v1::PositionRequest Request(const std::string& json) {
  auto request = PositionRequestFromJson(json);
  EXPECT_TRUE(request.ok()) << request.status();
  return request.ok() ? *request : v1::PositionRequest();
}

std::vector<int64_t> Shape(const v1::PositionResponse& response) {
  return {response.position_ids().shape().begin(), response.position_ids().shape().end()};
}

// Every rank of cp_size against `whole`, the request's positions over the padded lengths
// ([3][B][L] or [3][total], row-major: what cp_token_index indexes).
void ExpectRanksSliceTheWhole(const PositionService& service, v1::PositionRequest request,
                              const v1::PositionResponse& whole, int cp_size) {
  SCOPED_TRACE(::testing::Message() << "cp_size " << cp_size);
  const auto& all = whole.position_ids().int64_values();
  const int64_t total = all.size() / 3;
  const int64_t rows = whole.mrope_position_deltas().int64_values_size();
  std::vector<int> held(total, 0);
  for (int rank = 0; rank < cp_size; ++rank) {
    request.mutable_options()->set_cp_size(cp_size);
    request.mutable_options()->set_cp_rank(rank);
    const v1::PositionResponse part = Handle(service, request);
    const auto& got = part.position_ids().int64_values();
    const int64_t n = got.size() / 3;
    ASSERT_EQ(n * cp_size, total) << "rank " << rank;
    ASSERT_EQ(part.cp_token_index_size(), n);
    ASSERT_EQ(part.cu_seqlens_size(), rows + 1);
    EXPECT_EQ(part.cu_seqlens(rows), n);
    for (int64_t j = 0; j < n; ++j) {
      const int64_t index = part.cp_token_index(j);
      ASSERT_TRUE(index >= 0 && index < total) << index;
      ++held[index];
      for (int axis = 0; axis < 3; ++axis) {
        ASSERT_EQ(got[axis * n + j], all[axis * total + index])
            << "rank " << rank << " token " << j << " axis " << axis;
      }
    }
    EXPECT_EQ(part.mrope_position_deltas().int64_values_size(), rows);
  }
  for (int64_t i = 0; i < total; ++i) EXPECT_EQ(held[i], 1) << "token " << i;
}

TEST(ContextParallelServiceTest, PackedRanksSliceThePackedPositions) {
  const PositionService service = PresetService("qwen2_5_vl");
  v1::PositionRequest request = Request(kSamples);
  request.mutable_options()->set_layout(v1::PositionOptions::PACKED);
  const v1::PositionResponse whole = Handle(service, request);
  ASSERT_THAT(whole.cu_seqlens(), ElementsAre(0, 40, 80, 144));
  for (const int cp_size : {1, 2, 4}) ExpectRanksSliceTheWhole(service, request, whole, cp_size);

  request.mutable_options()->set_cp_size(4);
  request.mutable_options()->set_cp_rank(3);
  const v1::PositionResponse rank3 = Handle(service, request);
  EXPECT_THAT(Shape(rank3), ElementsAre(3, 36));
  EXPECT_THAT(rank3.cu_seqlens(), ElementsAre(0, 10, 20, 36));
  // Sequence 0's chunks 3 and 4 of 5 tokens each (Megatron-LM's order: rank, then mirror).
  EXPECT_EQ(rank3.cp_token_index(0), 15);
  EXPECT_EQ(rank3.cp_token_index(5), 20);
}

// Explicit sequences in the padded layout are right-aligned (left padding, 0): the ranks slice
// that [3][B][L] as it is.
TEST(ContextParallelServiceTest, PaddedRanksSliceTheRightAlignedRows) {
  const PositionService service = PresetService("qwen2_5_vl");
  v1::PositionRequest request = Request(kSamples);
  const v1::PositionResponse whole = Handle(service, request);
  ASSERT_THAT(Shape(whole), ElementsAre(3, 3, 64));
  for (const int cp_size : {1, 2, 4, 8, 16}) {
    ExpectRanksSliceTheWhole(service, request, whole, cp_size);
  }
  request.mutable_options()->set_cp_size(2);
  request.mutable_options()->set_cp_rank(1);
  EXPECT_THAT(Shape(Handle(service, request)), ElementsAre(3, 3, 32));
}

TEST(ContextParallelServiceTest, TokenIdBatchRanksSliceItsPositions) {
  const PositionService service = PresetService("qwen2_vl");
  v1::PositionRequest request = Request(kIdBatch);
  const v1::PositionResponse whole = Handle(service, request);  // [3][2][12], no padding
  ASSERT_THAT(Shape(whole), ElementsAre(3, 2, 12));
  for (const int cp_size : {1, 2, 3, 6}) ExpectRanksSliceTheWhole(service, request, whole, cp_size);
  request.mutable_options()->set_layout(v1::PositionOptions::PACKED);
  for (const int cp_size : {1, 2, 3, 6}) ExpectRanksSliceTheWhole(service, request, whole, cp_size);
}

// Left padding (HF generation batches): each real token's slice position is its position in
// get_rope_index's whole padded output at the gathered row * L + column, the padding slots
// get_rope_index's pad value, for several cp sizes.
TEST(ContextParallelServiceTest, LeftPaddedBatchRanksSliceTheBatchAsGiven) {
  const PositionService service = PresetService("qwen2_vl");
  v1::PositionRequest request = Request(R"({"inputs": {
      "input_ids": [[0, 0, 0, 0, 11, 151652, 151655, 151655, 151655, 151655, 151653, 14],
                    [0, 0, 0, 21, 22, 23, 24, 25, 26, 27, 28, 29],
                    [11, 151652, 151655, 151655, 151655, 151655, 151653, 14, 15, 16, 17, 18]],
      "attention_mask": [[0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1],
                         [0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1],
                         [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]],
      "image_grid_thw": [[1, 4, 4], [1, 4, 4]]}})");
  const v1::PositionResponse whole = Handle(service, request);  // get_rope_index's [3][3][12]
  ASSERT_THAT(Shape(whole), ElementsAre(3, 3, 12));
  EXPECT_EQ(whole.position_ids().int64_values(4), 0);  // row 0's first real token
  for (const int cp_size : {1, 2, 3, 6}) {
    ExpectRanksSliceTheWhole(service, request, whole, cp_size);
  }
  request.mutable_options()->set_cp_size(6);
  request.mutable_options()->set_cp_rank(2);
  const v1::PositionResponse rank2 = Handle(service, request);
  // Chunks 2 and 9 of one token each; row 1's column 9 holds token 27, the row's 7th.
  EXPECT_THAT(rank2.cp_token_index(), ElementsAre(2, 9, 14, 21, 26, 33));
  EXPECT_EQ(rank2.position_ids().int64_values(3), 6);
}

TEST(ContextParallelServiceTest, OtherOutputTypesHoldTheSameValues) {
  const PositionService service = PresetService("qwen2_vl");
  v1::PositionRequest request = Request(kIdBatch);
  request.mutable_options()->set_cp_size(3);
  request.mutable_options()->set_cp_rank(1);
  const v1::PositionResponse as_int64 = Handle(service, request);
  request.mutable_options()->set_output_type(v1::PositionOptions::INT32);
  const v1::PositionResponse as_int32 = Handle(service, request);
  ASSERT_EQ(as_int32.position_ids().int32_values_size(),
            as_int64.position_ids().int64_values_size());
  for (int i = 0; i < as_int32.position_ids().int32_values_size(); ++i) {
    EXPECT_EQ(as_int32.position_ids().int32_values(i), as_int64.position_ids().int64_values(i));
  }
  EXPECT_EQ(as_int32.cp_token_index_size(), as_int64.cp_token_index_size());
}

TEST(ContextParallelServiceTest, CosSinAreTheWholeOnesAtTheTokenIndices) {
  const PositionService service = PresetService("qwen2_vl");
  v1::PositionRequest request = Request(kIdBatch);
  request.mutable_options()->set_cos_sin(true);
  const v1::PositionResponse whole = Handle(service, request);
  request.mutable_options()->set_cp_size(2);
  request.mutable_options()->set_cp_rank(1);
  const v1::PositionResponse part = Handle(service, request);
  const std::vector<int64_t> shape(part.cos().shape().begin(), part.cos().shape().end());
  ASSERT_THAT(shape, ElementsAre(2, 6, 64));
  for (int j = 0; j < part.cp_token_index_size(); ++j) {
    for (int pair = 0; pair < 64; ++pair) {
      const int64_t at = part.cp_token_index(j) * 64 + pair;
      ASSERT_EQ(part.cos().float_values(j * 64 + pair), whole.cos().float_values(at));
      ASSERT_EQ(part.sin().float_values(j * 64 + pair), whole.sin().float_values(at));
    }
  }
}

TEST(ContextParallelServiceTest, JsonRequestAndResponseCarryTheFields) {
  auto request = PositionRequestFromJson(
      R"({"inputs": {"input_ids": [[1, 2, 3, 4]]}, "options": {"cpSize": "2", "cp_rank": 1}})");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->options().cp_size(), 2);
  EXPECT_EQ(request->options().cp_rank(), 1);
  const std::string json = PositionResponseToJson(Handle(PresetService("qwen2_vl"), *request));
  EXPECT_EQ(json,
            R"({"position_ids":[[[1,2]],[[1,2]],[[1,2]]],"mrope_position_deltas":[0],)"
            R"("rope_deltas":[0],"cu_seqlens":[0,2],"cp_token_index":[1,2]})");

  auto too_big = PositionRequestFromJson(R"({"options": {"cp_size": 3000000000}})");
  EXPECT_THAT(std::string(too_big.status().message()), HasSubstr("options.cp_size"));
}

TEST(ContextParallelServiceTest, ErrorsNameTheFieldsAndValues) {
  const PositionService service = PresetService("qwen2_5_vl");
  const auto message = [&](const std::string& options) {
    auto request = PositionRequestFromJson(
        R"({"inputs": {"input_ids": [[1, 2, 3, 4, 5, 6]]}, "options": )" + options + "}");
    EXPECT_TRUE(request.ok()) << request.status();
    auto response = service.Handle(*request);
    EXPECT_FALSE(response.ok());
    return std::string(response.status().message());
  };
  EXPECT_THAT(message(R"({"cp_size": 2, "cp_rank": 2})"),
              HasSubstr("cp_rank=2 must be in [0, cp_size=2)"));
  EXPECT_THAT(message(R"({"cp_size": -1})"), HasSubstr("cp_size=-1 must be at least 1"));
  EXPECT_THAT(message(R"({"cp_rank": 1})"), HasSubstr("options.cp_rank=1 needs options.cp_size"));
  // 6 tokens, 2 * cp_size = 4: refused, not padded (context_parallel.h).
  EXPECT_THAT(message(R"({"cp_size": 2})"),
              HasSubstr("padded length 6 must be a multiple of 2 * cp_size = 4"));
  EXPECT_THAT(message(R"({"cp_size": 2, "layout": "PACKED"})"),
              HasSubstr("padded length 6 must be a multiple of 2 * cp_size = 4"));
  EXPECT_THAT(message(R"({"cp_size": 3, "window_begin": 0, "window_end": 6})"),
              HasSubstr("cp_size: context parallelism does not take a window"));
}

// A vLLM request is one row: its ranks slice it; an EVS-pruned one is refused.
TEST(ContextParallelServiceTest, VllmRequestsSliceAndEvsRefuses) {
  const GoldenCase features = ReadGoldenCase("qwen2_5_vl_vllm_mm_features", "case_010.json");
  auto service = PositionService::Create(features.model);
  ASSERT_TRUE(service.ok()) << service.status();
  OutputOptions options;
  options.layout = OutputLayout::kPacked;
  auto whole = service->Compute<int64_t>(features.prompt, options);
  ASSERT_TRUE(whole.ok()) << whole.status();
  const int64_t total = whole->shape[1];  // 14 tokens: 2 * 7
  for (int rank = 0; rank < 7; ++rank) {
    options.context_parallel = ContextParallel{7, rank};
    auto part = service->Compute<int64_t>(features.prompt, options);
    ASSERT_TRUE(part.ok()) << part.status();
    ASSERT_EQ(part->cp_token_index.size(), 2u);
    for (int j = 0; j < 2; ++j) {
      for (int axis = 0; axis < 3; ++axis) {
        EXPECT_EQ(part->position_ids[axis * 2 + j],
                  whole->position_ids[axis * total + part->cp_token_index[j]]);
      }
    }
  }

  const GoldenCase evs = ReadGoldenCase("qwen2_5_vl_vllm_evs", "case_017.json");
  auto evs_service = PositionService::Create(evs.model);
  ASSERT_TRUE(evs_service.ok()) << evs_service.status();
  options.context_parallel = ContextParallel{1, 0};
  EXPECT_THAT(
      std::string(evs_service->Compute<int64_t>(evs.prompt, options).status().message()),
      HasSubstr("cp_size: context parallelism slices training batches, not a vLLM EVS request"));
}

}  // namespace
}  // namespace mrope
