// HunYuan-VL's XD-RoPE positions (PositionScheme::kSequentialGrid, mrope/positions/
// sequential_grid.h): the rule on small prompts worked by hand from transformers 5.23.0's
// HunYuanVLModel.get_rope_index (the live differential tests run the rule itself:
// python/tests/test_reference_transformers.py), any number of axes, its rows by token index
// (windows, packing, context-parallel slices) and the refusals.

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/context_parallel.h"
#include "mrope/positions/position_buffer.h"
#include "tests/testing/positions_testing.h"

namespace mrope {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr int64_t kImage = 120120;
constexpr int64_t kStart = 120118;
constexpr int64_t kEnd = 120119;
constexpr int64_t kText = 7;

ModelConfig HunyuanConfig(int32_t num_axes) {
  ModelConfig config = Preset("hunyuan_vl");
  config.num_axes = num_axes;
  return config;
}

// <image_start>, `run` image tokens, <image_end>; types 1 on the image tokens.
void Image(std::vector<int64_t>& ids, std::vector<int64_t>& types, int64_t run) {
  ids.push_back(kStart);
  ids.insert(ids.end(), run, kImage);
  ids.push_back(kEnd);
  types.push_back(0);
  types.insert(types.end(), run, 1);
  types.push_back(0);
}

void Text(std::vector<int64_t>& ids, std::vector<int64_t>& types, int64_t n) {
  ids.insert(ids.end(), n, kText);
  types.insert(types.end(), n, 0);
}

TestBatch OneImageRow(int64_t run) {
  TestBatch batch;
  Text(batch.input_ids, batch.mm_token_type_ids, 2);
  Image(batch.input_ids, batch.mm_token_type_ids, run);
  Text(batch.input_ids, batch.mm_token_type_ids, 1);
  batch.batch_size = 1;
  batch.seq_len = static_cast<int64_t>(batch.input_ids.size());
  batch.media.image_grid_thw = {{1, 4, 2}};  // 2 rows of 1 + 1 columns: 4 grid tokens
  return batch;
}

// T2, <start>, begin, 2x2 grid, end, <end>, T1: 11 tokens. Leading axes count; the grid's
// tokens 4..7 take columns 0 1 0 1, rows 0 0 1 1 and image 0.
TEST(SequentialGrid, FourAxesWithBeginAndEnd) {
  const TestBatch batch = OneImageRow(6);
  auto plan = PlanBatch(HunyuanConfig(4), batch.View());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->num_axes, 4);
  std::vector<int64_t> out;
  ASSERT_TRUE(FillBatch(*plan, out).ok());
  ASSERT_EQ(out.size(), 4u * 11);
  const std::vector<int64_t> index = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_THAT(std::vector<int64_t>(out.begin(), out.begin() + 11), ElementsAreArray(index));
  EXPECT_THAT(std::vector<int64_t>(out.begin() + 11, out.begin() + 22),
              ElementsAre(0, 1, 2, 3, 0, 1, 0, 1, 8, 9, 10));
  EXPECT_THAT(std::vector<int64_t>(out.begin() + 22, out.begin() + 33),
              ElementsAre(0, 1, 2, 3, 0, 0, 1, 1, 8, 9, 10));
  EXPECT_THAT(std::vector<int64_t>(out.begin() + 33, out.end()),
              ElementsAre(0, 1, 2, 3, 0, 0, 0, 0, 8, 9, 10));
  EXPECT_EQ(plan->layouts[0].delta, 0);
  std::vector<int64_t> decode;
  ASSERT_TRUE(FillDecode(*plan, 2, decode).ok());
  EXPECT_THAT(decode, ElementsAre(11, 12, 11, 12, 11, 12, 11, 12));
}

// The grid alone (no begin and end in the run): it starts at the run's first token. Three
// axes have no leading sequential axis; five have two.
TEST(SequentialGrid, AxesCountFromSections) {
  const TestBatch batch = OneImageRow(4);
  for (const int32_t axes : {3, 5}) {
    auto plan = PlanBatch(HunyuanConfig(axes), batch.View());
    ASSERT_TRUE(plan.ok()) << plan.status();
    std::vector<int32_t> out;
    ASSERT_TRUE(FillBatch(*plan, out).ok());
    ASSERT_EQ(out.size(), static_cast<size_t>(axes) * 9);
    const auto plane = [&](int a) {
      return std::vector<int32_t>(out.begin() + a * 9, out.begin() + (a + 1) * 9);
    };
    for (int a = 0; a < axes - 3; ++a) EXPECT_THAT(plane(a), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8));
    EXPECT_THAT(plane(axes - 3), ElementsAre(0, 1, 2, 0, 1, 0, 1, 7, 8));
    EXPECT_THAT(plane(axes - 2), ElementsAre(0, 1, 2, 0, 0, 1, 1, 7, 8));
    EXPECT_THAT(plane(axes - 1), ElementsAre(0, 1, 2, 0, 0, 0, 0, 7, 8));
  }
}

// The image ordinal counts the batch's images, not the row's; left padding holds 0 and the
// delta counts the largest value on any axis (a later row's ordinal past its length).
TEST(SequentialGrid, OrdinalCountsTheBatch) {
  TestBatch batch;
  batch.batch_size = 3;
  std::vector<std::vector<int64_t>> ids(3), types(3);
  Image(ids[0], types[0], 4);
  Image(ids[0], types[0], 4);
  Image(ids[1], types[1], 4);
  Image(ids[2], types[2], 4);
  batch.seq_len = 12;
  for (int r = 0; r < 3; ++r) {
    const int64_t pad = 12 - static_cast<int64_t>(ids[r].size());
    batch.input_ids.insert(batch.input_ids.end(), pad, 0);
    batch.mm_token_type_ids.insert(batch.mm_token_type_ids.end(), pad, 0);
    batch.attention_mask.insert(batch.attention_mask.end(), pad, 0);
    batch.input_ids.insert(batch.input_ids.end(), ids[r].begin(), ids[r].end());
    batch.mm_token_type_ids.insert(batch.mm_token_type_ids.end(), types[r].begin(),
                                   types[r].end());
    batch.attention_mask.insert(batch.attention_mask.end(), ids[r].size(), 1);
  }
  batch.media.image_grid_thw = {{1, 4, 2}, {1, 4, 2}, {1, 4, 2}, {1, 4, 2}};
  auto plan = PlanBatch(HunyuanConfig(4), batch.View());
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<int64_t> out;
  ASSERT_TRUE(FillBatch(*plan, out).ok());
  // Axis 3, row 2: 6 padding slots, then <start> at 0, the grid at image 3, <end> at 5.
  EXPECT_THAT(std::vector<int64_t>(out.begin() + 3 * 36 + 24, out.begin() + 3 * 36 + 36),
              ElementsAre(0, 0, 0, 0, 0, 0, 0, 3, 3, 3, 3, 5));
  EXPECT_EQ(plan->layouts[0].delta, 0);
  EXPECT_EQ(plan->layouts[2].delta, 0);
  // Row 1 (one image of 6 tokens) holds ordinal 2 below its last index 5: delta 0; a row of
  // the bare 4-token grid at ordinal 5 would give 5 + 1 - 4 = 2 (next test).
}

TEST(SequentialGrid, DeltaCountsTheOrdinal) {
  TestBatch batch;
  batch.batch_size = 2;
  batch.seq_len = 8;
  // Two bare grids in a row are one run of 8 tokens: it fits neither form of the first grid.
  batch.input_ids.assign(8, kImage);
  batch.input_ids.insert(batch.input_ids.end(), 8, kText);
  batch.mm_token_type_ids.assign(8, 1);
  batch.mm_token_type_ids.insert(batch.mm_token_type_ids.end(), 8, 0);
  batch.media.image_grid_thw = {{1, 4, 2}, {1, 4, 2}};
  EXPECT_THAT(PlanBatch(HunyuanConfig(4), batch.View()).status().message(),
              HasSubstr("the image run has 8 tokens"));
  // Five rows of one bare grid each: the fifth's ordinal 4 passes its last index 3.
  TestBatch many;
  many.batch_size = 5;
  many.seq_len = 4;
  for (int r = 0; r < 5; ++r) {
    many.input_ids.insert(many.input_ids.end(), 4, kImage);
    many.mm_token_type_ids.insert(many.mm_token_type_ids.end(), 4, 1);
    many.media.image_grid_thw.push_back({1, 4, 2});
  }
  auto many_plan = PlanBatch(HunyuanConfig(4), many.View());
  ASSERT_TRUE(many_plan.ok()) << many_plan.status();
  EXPECT_EQ(many_plan->layouts[3].delta, 0);
  EXPECT_EQ(many_plan->layouts[4].delta, 1);
}

// Row 0: OneImageRow(6) with a hole (mask 0) after its second token; row 1: OneImageRow(4)
// right-padded by 3; L = 12. Both rows end in text, so past a row's n tokens index i takes i on
// every axis.
TEST(SequentialGrid, RowsByTokenIndexPackAndSlice) {
  const TestBatch rows[2] = {OneImageRow(6), OneImageRow(4)};
  TestBatch batch;
  batch.batch_size = 2;
  batch.seq_len = 12;
  for (int row = 0; row < 2; ++row) {
    const std::vector<int64_t>& ids = rows[row].input_ids;
    const std::vector<int64_t>& types = rows[row].mm_token_type_ids;
    const int64_t hole = row == 0 ? 2 : 12;
    for (int64_t c = 0, i = 0; c < 12; ++c) {
      const bool real = c != hole && i < static_cast<int64_t>(ids.size());
      batch.input_ids.push_back(real ? ids[i] : 0);
      batch.mm_token_type_ids.push_back(real ? types[i] : 0);
      batch.attention_mask.push_back(real ? 1 : 0);
      i += real;
    }
    batch.media.image_grid_thw.push_back({1, 4, 2});
  }
  auto plan = PlanBatch(HunyuanConfig(4), batch.View());
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<int64_t> whole;
  ASSERT_TRUE(FillBatch(*plan, whole).ok());
  std::vector<int64_t> columns[2];
  for (int64_t at = 0; at < 24; ++at) {
    if (batch.attention_mask[at] == 1) columns[at / 12].push_back(at % 12);
  }
  const auto want = [&](int a, int row, int64_t i) {
    const int64_t n = static_cast<int64_t>(columns[row].size());
    return i < n ? whole[(a * 2 + row) * 12 + columns[row][i]] : i;
  };
  ASSERT_EQ(RowTokenCount(*plan, 0), 11);
  ASSERT_EQ(RowTokenCount(*plan, 1), 9);
  for (int row = 0; row < 2; ++row) {
    const int64_t end = RowTokenCount(*plan, row) + 3;
    std::vector<int32_t> out(4 * (end - 1));
    ASSERT_TRUE(FillRowTokens(*plan, row, 1, end, out.data(), end - 1).ok());
    for (int a = 0; a < 4; ++a) {
      for (int64_t i = 1; i < end; ++i) {
        EXPECT_EQ(out[a * (end - 1) + i - 1], want(a, row, i)) << row << " " << a << " " << i;
      }
    }
  }
  EXPECT_THAT(std::string(FillRowTokens(*plan, 0, 3, 2, whole.data(), 1).message()),
              HasSubstr("window [3, 2) must satisfy 0 <= begin <= end"));

  auto packed = PackBatch<int64_t>(*plan);
  ASSERT_TRUE(packed.ok()) << packed.status();
  EXPECT_THAT(packed->cu_seqlens, ElementsAre(0, 11, 20));
  ASSERT_EQ(packed->positions.size(), 4u * 20);
  for (int a = 0; a < 4; ++a) {
    for (int row = 0; row < 2; ++row) {
      for (int64_t i = 0; i < RowTokenCount(*plan, row); ++i) {
        EXPECT_EQ(packed->positions[a * 20 + packed->cu_seqlens[row] + i], want(a, row, i));
      }
    }
  }

  // The batch as given: real tokens as FillBatch, the hole 0, right padding the decode steps.
  for (int rank = 0; rank < 2; ++rank) {
    auto slice = ContextParallelBatchSlice<int64_t>(*plan, 2, rank);
    ASSERT_TRUE(slice.ok()) << slice.status();
    ASSERT_EQ(slice->num_tokens, 12);
    for (int64_t j = 0; j < 12; ++j) {
      const int64_t row = slice->token_index[j] / 12, column = slice->token_index[j] % 12;
      const int64_t last = columns[row].back();
      for (int a = 0; a < 4; ++a) {
        const int64_t expected =
            column > last ? RowTokenCount(*plan, row) + column - last - 1
                          : whole[(a * 2 + row) * 12 + column];  // the hole: FillBatch's 0
        EXPECT_EQ(slice->positions[a * 12 + j], expected) << rank << " " << j << " " << a;
      }
    }
    // Each row's own tokens padded to 12: decode steps after them.
    auto own = ContextParallelSlice<int64_t>(*plan, std::vector<int64_t>{12, 12}, 2, rank);
    ASSERT_TRUE(own.ok()) << own.status();
    for (int64_t j = 0; j < 12; ++j) {
      const int64_t row = own->token_index[j] / 12, i = own->token_index[j] % 12;
      for (int a = 0; a < 4; ++a) EXPECT_EQ(own->positions[a * 12 + j], want(a, row, i));
    }
  }
}

std::string Error(const TestBatch& batch, int32_t axes = 4) {
  return std::string(PlanBatch(HunyuanConfig(axes), batch.View()).status().message());
}

TEST(SequentialGrid, Refusals) {
  TestBatch batch = OneImageRow(5);
  EXPECT_THAT(Error(batch), HasSubstr("the image run has 5 tokens, image_grid_thw[0] gives 4 "
                                      "(or 6 with its begin and end tokens)"));
  batch = OneImageRow(6);
  batch.media.image_grid_thw = {{2, 4, 2}};
  EXPECT_THAT(Error(batch), HasSubstr("image_grid_thw[0] = (2, 4, 2)"));
  batch.media.image_grid_thw = {{1, 4, 3}};
  EXPECT_THAT(Error(batch), HasSubstr("multiples of spatial_merge_size = 2"));
  batch.media.image_grid_thw = {};
  EXPECT_THAT(Error(batch), HasSubstr("no image_grid_thw entry left"));
  batch.media.image_grid_thw = {{1, 4, 2}, {1, 4, 2}};
  EXPECT_THAT(Error(batch), HasSubstr("image_grid_thw has 2 entries and the batch 1 image runs"));
  batch = OneImageRow(6);
  batch.mm_token_type_ids[4] = 2;
  EXPECT_THAT(Error(batch), HasSubstr("mm_token_type_ids[0][4] = 2"));
  batch = OneImageRow(6);
  batch.mm_token_type_ids[0] = 1;
  EXPECT_THAT(Error(batch), HasSubstr("input_ids[0][0] = 7 is typed 1"));
  batch = OneImageRow(6);
  batch.mm_token_type_ids.clear();
  EXPECT_THAT(Error(batch), HasSubstr("mm_token_type_ids is required"));
  batch = OneImageRow(6);
  batch.media.video_grid_thw = {{1, 4, 2}};
  EXPECT_THAT(Error(batch), HasSubstr("images only"));
  batch = OneImageRow(6);
  batch.attention_mask.assign(batch.input_ids.size(), 0);
  EXPECT_THAT(Error(batch), HasSubstr("row 0 has no real tokens"));
  EXPECT_THAT(Error(OneImageRow(6), 9), HasSubstr("num_axes (the length of mrope_section) must "
                                                  "be in [3, 8] for hunyuan_vl, got 9"));
  EXPECT_THAT(Error(OneImageRow(6), 2), HasSubstr("got 2"));
  ModelConfig qwen = Preset("qwen2_vl");
  qwen.num_axes = 4;
  EXPECT_THAT(ValidateModelConfig(qwen).message(),
              HasSubstr("must be in [3, 3] for qwen2_vl, got 4"));
}

}  // namespace
}  // namespace mrope
