// The token scan and the mask check at the edges of their vector blocks: a bad id, a marker, a
// stray token inside a media run, a hole or a bad value in the mask, at every offset of several
// blocks, each checked against what the scalar definition gives for that input.

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/limits.h"
#include "mrope/positions/scan_kernels.h"
#include "mrope/positions/scanner.h"
#include "tests/testing/positions_testing.h"

namespace mrope {
namespace {

using ::testing::HasSubstr;

// Whole blocks, a partial tail, and every lane of a block.
constexpr int64_t kLength = 3 * kScanBlock + 7;

// The rows below are Qwen2-VL prompts; its ids come from the family table.
const SpecialTokens& Ids() {
  static const SpecialTokens ids = Preset("qwen2_vl").tokens;
  return ids;
}

// Plain text ids below the markers, 0 and the largest text id among them.
std::vector<int64_t> Text(int64_t n) {
  std::vector<int64_t> ids(n);
  const int64_t markers = Ids().vision_start;  // the smallest Qwen2-VL marker
  for (int64_t i = 0; i < n; ++i) ids[i] = i % 3 == 0 ? 0 : (i * 7919) % markers;
  if (n > 1) ids[1] = markers - 1;
  return ids;
}

// A row of one image block of n tokens, and its grid [1, 2, 2n] (n tokens after the 2x2 merge).
TestBatch ImageRow(int64_t n, std::vector<int64_t> ids = {}) {
  ids.push_back(Ids().vision_start);
  ids.insert(ids.end(), n, Ids().image);
  ids.push_back(Ids().vision_end);
  TestBatch batch = OneRow(std::move(ids));
  batch.media.image_grid_thw = {{1, 2, 2 * n}};
  return batch;
}

std::string PlanError(const TestBatch& batch) {
  return std::string(PlanBatch(Preset("qwen2_vl"), batch.View()).status().message());
}

TEST(ScanBoundaries, BadIdAtEveryOffsetOfText) {
  for (const int64_t bad : {int64_t{-1}, kMaxTokenId + 1}) {
    for (int64_t at = 0; at < kLength; ++at) {
      std::vector<int64_t> ids = Text(kLength);
      ids[at] = bad;
      EXPECT_THAT(PlanError(OneRow(ids)),
                  HasSubstr(absl::StrCat("row 0, token ", at, ": input_ids value ", bad,
                                         " is not a token id")));
    }
  }
}

TEST(ScanBoundaries, LargestTokenIdIsText) {
  std::vector<int64_t> ids = Text(kLength);
  for (int64_t at = 0; at < kLength; at += 5) ids[at] = kMaxTokenId;
  const auto plan = PlanBatch(Preset("qwen2_vl"), OneRow(ids).View());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->rows[0].num_tokens(), kLength);
}

TEST(ScanBoundaries, BadIdAtEveryOffsetOfAnImageRun) {
  for (const int64_t bad : {int64_t{-1}, kMaxTokenId + 1}) {
    for (int64_t at = 0; at < kLength; ++at) {
      TestBatch batch = ImageRow(kLength);
      batch.input_ids[1 + at] = bad;
      // Right after <vision_start> the id is reported as the block's missing media token.
      EXPECT_THAT(PlanError(batch),
                  HasSubstr(at == 0 ? absl::StrCat("row 0, token 1: vision_start must be followed "
                                                   "by an image or video token, found ", bad)
                                    : absl::StrCat("row 0, token ", 1 + at,
                                                   ": input_ids value ", bad)));
    }
  }
}

// Text, an image block, text: with the block starting at every offset, the spans are the
// pieces the row was built from.
TEST(ScanBoundaries, VisionStartAtEveryOffset) {
  const int64_t image_tokens = kScanBlock + 3;
  for (int64_t before = 0; before <= kLength; ++before) {
    TestBatch batch = ImageRow(image_tokens, Text(before));
    const int64_t after = kLength - before;
    const std::vector<int64_t> tail = Text(after);
    batch.input_ids.insert(batch.input_ids.end(), tail.begin(), tail.end());
    batch.seq_len = batch.input_ids.size();
    const auto plan = PlanBatch(Preset("qwen2_vl"), batch.View());
    ASSERT_TRUE(plan.ok()) << "before " << before << ": " << plan.status();
    // The image span covers its markers; the text on either side is a span when not empty.
    std::vector<SpanKind> expected_kinds;
    std::vector<int64_t> expected_text;
    for (const int64_t text : {before, int64_t{-1}, after}) {
      if (text == 0) continue;
      expected_kinds.push_back(text < 0 ? SpanKind::kImage : SpanKind::kText);
      expected_text.push_back(text < 0 ? 0 : text);
    }
    std::vector<SpanKind> kinds;
    std::vector<int64_t> text_tokens;
    for (const PlacedSpan& placed : plan->rows[0].spans()) {
      kinds.push_back(placed.span.kind);
      text_tokens.push_back(placed.span.kind == SpanKind::kText ? placed.span.text_tokens : 0);
    }
    EXPECT_EQ(kinds, expected_kinds) << "before " << before;
    EXPECT_EQ(text_tokens, expected_text) << "before " << before;
  }
}

// A text token inside an image run ends it there: the block is short by the tokens after it.
// (At offset 0 it is the missing media token after <vision_start>, covered above.)
TEST(ScanBoundaries, StrayTokenAtEveryOffsetOfAnImageRun) {
  for (int64_t at = 1; at < kLength; ++at) {
    TestBatch batch = ImageRow(kLength);
    batch.input_ids[1 + at] = Ids().vision_end;
    EXPECT_THAT(PlanError(batch),
                HasSubstr(absl::StrCat("row 0, token 0: image block has ", at,
                                       " tokens but image_grid_thw[0] gives ", kLength)));
  }
}

// HF's text-only positions, the scalar definition: cumsum(mask) - 1 at real tokens, 1 at pads.
std::vector<int64_t> TextOnlyPositions(const std::vector<int64_t>& mask, int64_t b, int64_t l) {
  std::vector<int64_t> planes(3 * b * l);
  for (int64_t row = 0; row < b; ++row) {
    int64_t count = 0;
    for (int64_t c = 0; c < l; ++c) {
      const int64_t m = mask[row * l + c];
      count += m;
      for (int axis = 0; axis < 3; ++axis) planes[(axis * b + row) * l + c] = m ? count - 1 : 1;
    }
  }
  return planes;
}

// Two rows: all ones, then left and right padding of block-edge lengths with a hole at every
// column between them (or none).
TEST(ScanBoundaries, MaskPaddingAndHolesAtBlockEdges) {
  const int64_t l = kLength;
  for (const int64_t left : {int64_t{0}, int64_t{1}, kScanBlock - 1, kScanBlock, kScanBlock + 1}) {
    for (const int64_t right : {int64_t{0}, int64_t{1}, kScanBlock - 1, kScanBlock}) {
      for (int64_t hole = left; hole <= l - right; ++hole) {  // hole == l - right: none
        std::vector<int64_t> mask(2 * l, 1);
        for (int64_t c = 0; c < left; ++c) mask[l + c] = 0;
        for (int64_t c = l - right; c < l; ++c) mask[l + c] = 0;
        if (hole < l - right) mask[l + hole] = 0;
        TestBatch batch;
        batch.batch_size = 2;
        batch.seq_len = l;
        batch.input_ids = Text(l);
        const std::vector<int64_t> row1 = Text(l);
        batch.input_ids.insert(batch.input_ids.end(), row1.begin(), row1.end());
        batch.attention_mask = mask;
        const auto plan = PlanBatch(Preset("qwen2_vl"), batch.View());
        ASSERT_TRUE(plan.ok()) << plan.status();
        std::vector<int64_t> positions;
        ASSERT_TRUE(FillBatch(*plan, positions).ok());
        ASSERT_EQ(positions, TextOnlyPositions(mask, 2, l))
            << "left " << left << " right " << right << " hole " << hole;
      }
    }
  }
}

// The first value that is neither 0 nor 1, in row-major order, is the one reported, wherever
// it sits: in the left padding, the real tokens or the right padding.
TEST(ScanBoundaries, BadMaskValueAtEveryOffset) {
  const int64_t l = kLength;
  const int64_t left = kScanBlock + 1;
  const int64_t right = 5;
  for (const int64_t bad : {int64_t{2}, int64_t{-1}, std::numeric_limits<int64_t>::min()}) {
    for (int64_t at = 0; at < 2 * l; ++at) {
      std::vector<int64_t> mask(2 * l, 1);
      for (int64_t c = 0; c < left; ++c) mask[l + c] = 0;
      for (int64_t c = l - right; c < l; ++c) mask[l + c] = 0;
      mask[at] = bad;
      if (at + 3 < 2 * l) mask[at + 3] = 7;  // a later bad value is not the one reported
      TestBatch batch;
      batch.batch_size = 2;
      batch.seq_len = l;
      batch.input_ids.assign(2 * l, 100);
      batch.attention_mask = mask;
      EXPECT_THAT(PlanError(batch), HasSubstr(absl::StrCat("attention_mask[", at / l, "][",
                                                           at % l, "] must be 0 or 1, got ",
                                                           bad)));
    }
  }
}

// MaxRowSpans, the reserve PlanBatch makes once, bounds a row's spans: a Qwen3-VL video of t
// frames is t blocks, each with its text before it, and the text after the last.
TEST(ScanBoundaries, MaxRowSpansBoundsTheSpansOfARow) {
  const ModelConfig config = Preset("qwen3_vl");
  const SpecialTokens& ids = config.tokens;
  MediaInputs media;
  media.video_grid_thw = {{3, 2, 4}};  // 3 frames of 2 tokens after the 2x2 merge
  std::vector<int64_t> row;
  for (int frame = 0; frame < 3; ++frame) {
    row.insert(row.end(), {7, 8, ids.vision_start, ids.video, ids.video, ids.vision_end});
  }
  row.push_back(9);
  const PositionPolicy policy = PolicyFor(config);
  const BatchScanner scanner(config, policy, media);
  EXPECT_EQ(scanner.MaxRowSpans(row.size()), 7);
  EXPECT_EQ(scanner.MaxRowSpans(5), 5);  // no more spans than tokens
  MediaCursor cursor;
  std::vector<Span> spans;
  ASSERT_TRUE(scanner.ScanRow(row, cursor, 0, spans).ok());
  EXPECT_EQ(spans.size(), size_t{7});
}

}  // namespace
}  // namespace mrope
