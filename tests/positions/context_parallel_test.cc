// Context-parallel slices (mrope/positions/context_parallel.h): the chunks Megatron-LM and
// TransformerEngine give rank r, and each rank's positions equal to the slice of the whole
// padded sequence's positions, bit for bit, over many cp sizes, lengths and layouts.

#include "mrope/positions/context_parallel.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/positions_testing.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;

int64_t RoundUp(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

TEST(ContextParallelTest, ChunksAreRankAndItsMirror) {
  const auto rank0 = ContextParallelChunks(16, 2, 0);
  ASSERT_TRUE(rank0.ok()) << rank0.status();
  EXPECT_EQ((*rank0)[0].begin, 0);
  EXPECT_EQ((*rank0)[0].end, 4);
  EXPECT_EQ((*rank0)[1].begin, 12);
  EXPECT_EQ((*rank0)[1].end, 16);
  const auto rank1 = ContextParallelChunks(16, 2, 1);
  ASSERT_TRUE(rank1.ok()) << rank1.status();
  EXPECT_EQ((*rank1)[0].begin, 4);
  EXPECT_EQ((*rank1)[1].begin, 8);
  EXPECT_EQ((*rank1)[1].end, 12);
}

// For every cp size and extra padding: each rank's slice is the whole padded positions at its
// token indices, and the ranks together hold every token exactly once.
TEST(ContextParallelTest, EveryRankEqualsTheSliceOfTheWholePositions) {
  const std::vector<SequencePositions> samples = MixedSamples();
  for (const int cp_size : {1, 2, 3, 4, 5, 8}) {
    for (const int64_t extra_chunks : {0, 1, 3}) {
      std::vector<int64_t> padded;
      std::vector<std::vector<int64_t>> whole[3];  // per axis, per sequence
      for (const SequencePositions& seq : samples) {
        padded.push_back(RoundUp(seq.num_tokens(), 2 * cp_size) + extra_chunks * 2 * cp_size);
        const auto axes = Window<int64_t>(seq, 0, padded.back());
        whole[0].push_back(axes.t);
        whole[1].push_back(axes.h);
        whole[2].push_back(axes.w);
      }
      std::vector<int64_t> flat[3];
      for (int axis = 0; axis < 3; ++axis) {
        for (const auto& seq : whole[axis]) flat[axis].insert(flat[axis].end(), seq.begin(), seq.end());
      }
      std::vector<int> seen(flat[0].size(), 0);
      for (int rank = 0; rank < cp_size; ++rank) {
        SCOPED_TRACE(::testing::Message() << "cp_size " << cp_size << " rank " << rank
                                          << " extra chunks " << extra_chunks);
        const auto slice = ContextParallelSlice<int64_t>(samples, padded, cp_size, rank);
        ASSERT_TRUE(slice.ok()) << slice.status();
        const int64_t n = slice->num_tokens;
        ASSERT_EQ(static_cast<int64_t>(slice->token_index.size()), n);
        ASSERT_EQ(slice->cu_seqlens.size(), samples.size() + 1);
        for (size_t i = 0; i < samples.size(); ++i) {
          EXPECT_EQ(slice->cu_seqlens[i + 1] - slice->cu_seqlens[i], padded[i] / cp_size);
        }
        for (int64_t j = 0; j < n; ++j) {
          const int64_t g = slice->token_index[j];
          ++seen[g];
          for (int axis = 0; axis < 3; ++axis) {
            ASSERT_EQ(slice->positions[axis * n + j], flat[axis][g])
                << "axis " << axis << ", local token " << j << ", packed token " << g;
          }
        }
      }
      EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
    }
  }
}

// A padded [B][S] batch (BSHD): every row padded to S gives [3][B][S / cp_size].
TEST(ContextParallelTest, PaddedBatchRowsSplitAlike) {
  const std::vector<SequencePositions> rows = MixedSamples();
  const int cp_size = 4;
  const int64_t s = 256;  // >= every row, a multiple of 8
  const std::vector<int64_t> padded(rows.size(), s);
  const auto slice = ContextParallelSlice<int32_t>(rows, padded, cp_size, 3);
  ASSERT_TRUE(slice.ok()) << slice.status();
  EXPECT_EQ(slice->num_tokens, 3 * s / cp_size);
  for (size_t b = 0; b < rows.size(); ++b) {
    const auto whole = Window<int32_t>(rows[b], 0, s);
    const int64_t c = s / (2 * cp_size);
    for (int64_t j = 0; j < 2 * c; ++j) {
      const int64_t token = j < c ? 3 * c + j : (2 * cp_size - 1 - 3) * c + (j - c);
      const int64_t local = static_cast<int64_t>(b) * (s / cp_size) + j;
      EXPECT_EQ(slice->positions[local], whole.t[token]);
      EXPECT_EQ(slice->positions[slice->num_tokens + local], whole.h[token]);
      EXPECT_EQ(slice->positions[2 * slice->num_tokens + local], whole.w[token]);
      EXPECT_EQ(slice->token_index[local], static_cast<int64_t>(b) * s + token);
    }
  }
}

// Qwen2-VL ids: an image prompt (T3 I4 T3) and text rows, L = 24.
constexpr int64_t kVisionStart = 151652, kVisionEnd = 151653, kImage = 151655;

std::vector<int64_t> ImagePrompt() {
  return {11, 12, 13, kVisionStart, kImage, kImage, kImage, kImage, kVisionEnd, 14, 15, 16};
}

// Rows: left-padded image prompt, right-padded image prompt, a mask with holes, left-padded
// text, and a full row.
TestBatch MixedPaddingBatch() {
  TestBatch batch;
  batch.batch_size = 5;
  batch.seq_len = 24;
  const std::vector<int64_t> image = ImagePrompt();
  const auto add_row = [&](std::vector<int64_t> ids, std::vector<int64_t> mask) {
    batch.input_ids.insert(batch.input_ids.end(), ids.begin(), ids.end());
    batch.attention_mask.insert(batch.attention_mask.end(), mask.begin(), mask.end());
  };
  std::vector<int64_t> ids(12, 0), mask(12, 0);  // left padding
  ids.insert(ids.end(), image.begin(), image.end());
  mask.insert(mask.end(), 12, 1);
  add_row(ids, mask);
  ids = image;  // right padding
  ids.resize(24, 0);
  mask.assign(12, 1);
  mask.resize(24, 0);
  add_row(ids, mask);
  ids.clear();  // holes: every third slot is padding
  mask.clear();
  for (int64_t c = 0; c < 24; ++c) {
    ids.push_back(c % 3 == 1 ? 0 : 100 + c);
    mask.push_back(c % 3 == 1 ? 0 : 1);
  }
  add_row(ids, mask);
  ids.assign(19, 0);  // left-padded text
  mask.assign(19, 0);
  for (int64_t c = 0; c < 5; ++c) {
    ids.push_back(200 + c);
    mask.push_back(1);
  }
  add_row(ids, mask);
  ids = image;  // no padding
  ids.insert(ids.end(), image.begin(), image.end());
  add_row(ids, std::vector<int64_t>(24, 1));
  batch.media.image_grid_thw = {{1, 4, 4}, {1, 4, 4}, {1, 4, 4}, {1, 4, 4}};
  return batch;
}

// The padded batch as given (BSHD): for every cp size, rank r holds Megatron's chunks r and
// 2 * cp_size - 1 - r of every row, token_index = row * L + column; a real token's slot holds
// its position in get_rope_index's whole [3][B][L] output, a padding slot after the row's last
// real token the next decode position, any other padding slot get_rope_index's pad value.
TEST(ContextParallelTest, PaddedBatchKeepsEveryTokenInItsColumn) {
  const TestBatch batch = MixedPaddingBatch();
  const auto plan = PlanBatch(Preset("qwen2_vl"), batch.View());
  ASSERT_TRUE(plan.ok()) << plan.status();
  const int64_t b = batch.batch_size;
  const int64_t l = batch.seq_len;
  std::vector<int64_t> whole;
  ASSERT_TRUE(FillBatch(*plan, whole, Padding::kGetRopeIndex).ok());
  for (const int cp_size : {1, 2, 3, 4, 6, 12}) {
    std::vector<int> held(b * l, 0);
    for (int rank = 0; rank < cp_size; ++rank) {
      SCOPED_TRACE(::testing::Message() << "cp_size " << cp_size << " rank " << rank);
      const auto slice = ContextParallelBatchSlice<int64_t>(*plan, cp_size, rank);
      ASSERT_TRUE(slice.ok()) << slice.status();
      const int64_t n = slice->num_tokens;
      ASSERT_EQ(n, b * l / cp_size);
      const auto chunks = ContextParallelChunks(l, cp_size, rank);
      ASSERT_TRUE(chunks.ok());
      for (int64_t j = 0; j < n; ++j) {
        const int64_t row = j / (l / cp_size);
        const int64_t k = j % (l / cp_size);  // the row's k-th local token
        const int64_t c = (*chunks)[0].end - (*chunks)[0].begin;
        const int64_t column = k < c ? (*chunks)[0].begin + k : (*chunks)[1].begin + (k - c);
        ASSERT_EQ(slice->token_index[j], row * l + column) << "local token " << j;
        ++held[row * l + column];
        int64_t last_real = -1, real_before = 0;
        for (int64_t i = 0; i < l; ++i) {
          if (batch.attention_mask[row * l + i] == 0) continue;
          last_real = i;
          real_before += i < column;
        }
        for (int axis = 0; axis < 3; ++axis) {
          const int64_t got = slice->positions[axis * n + j];
          SCOPED_TRACE(::testing::Message() << "row " << row << " column " << column
                                            << " axis " << axis);
          if (batch.attention_mask[row * l + column] == 1) {
            ASSERT_EQ(got, whole[(axis * b + row) * l + column]);
          } else if (column > last_real) {
            const int64_t step = real_before + (column - last_real - 1);
            const auto decode = Window<int64_t>(plan->rows[row], step, step + 1);
            ASSERT_EQ(got, axis == 0 ? decode.t[0] : axis == 1 ? decode.h[0] : decode.w[0]);
          } else {
            ASSERT_EQ(got, plan->rope_index_pad_value);
          }
        }
      }
    }
    EXPECT_TRUE(std::all_of(held.begin(), held.end(), [](int s) { return s == 1; }))
        << "cp_size " << cp_size;
  }
}

TEST(ContextParallelTest, PaddedBatchRefusesALengthTheSplitCannotTake) {
  const TestBatch batch = MixedPaddingBatch();
  const auto plan = PlanBatch(Preset("qwen2_vl"), batch.View());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(std::string(ContextParallelBatchSlice<int64_t>(*plan, 5, 0).status().message()),
              HasSubstr("padded length 24 must be a multiple of 2 * cp_size = 10"));
  PositionLimits tight;
  tight.max_total_tokens = 50;
  EXPECT_THAT(
      std::string(ContextParallelBatchSlice<int64_t>(*plan, 2, 0, tight).status().message()),
      HasSubstr("more than max_total_tokens = 50"));
}

TEST(ContextParallelTest, RefusesWhatTheSplitCannotTake) {
  const std::vector<SequencePositions> samples = MixedSamples();
  const auto status_of = [&](std::vector<int64_t> padded, int cp_size, int cp_rank) {
    return ContextParallelSlice<int64_t>(samples, padded, cp_size, cp_rank).status();
  };
  const int64_t n0 = samples[0].num_tokens();  // 37
  EXPECT_THAT(std::string(status_of({40, 24, 144}, 2, 0).message()),
              HasSubstr("sequence 1: padded length 24 is shorter than its 40 tokens"));
  EXPECT_THAT(std::string(status_of({n0, 400, 400}, 2, 0).message()),
              HasSubstr("sequence 0: padded length 37 must be a multiple of 2 * cp_size = 4"));
  EXPECT_THAT(std::string(status_of({40, 400, 400}, 2, 2).message()),
              HasSubstr("cp_rank=2 must be in [0, cp_size=2)"));
  EXPECT_THAT(std::string(status_of({40, 400, 400}, 0, 0).message()),
              HasSubstr("cp_size=0 must be at least 1"));
  EXPECT_THAT(std::string(status_of({40, 400}, 2, 0).message()),
              HasSubstr("padded_lengths has 2 entries for 3 sequences"));
  PositionLimits tight;
  tight.max_total_tokens = 100;
  EXPECT_THAT(std::string(ContextParallelSlice<int64_t>(samples, {40, 400, 400}, 2, 0, tight)
                              .status()
                              .message()),
              HasSubstr("more than max_total_tokens = 100"));
}

}  // namespace
}  // namespace mrope
