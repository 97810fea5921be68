// MergeDivisor (mrope/positions/model_config.h) against plain division, for every merge size a
// config admits (powers of two take the shift, the others the division), and a planner that
// uses it with a merge size that is not a power of two.

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "mrope/model/model_family.h"
#include "mrope/positions/model_config.h"
#include "mrope/positions/sequence_positions.h"
#include "mrope/positions/span.h"

namespace mrope {
namespace {

TEST(MergeDivisor, MatchesDivisionForEveryMergeSize) {
  for (int32_t m = 1; m <= 64; ++m) {
    const MergeDivisor merge(m);
    for (const int64_t x : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}, int64_t{63},
                            int64_t{64}, int64_t{65}, int64_t{1} << 16, (int64_t{1} << 16) + 1,
                            int64_t{3} * 5 * 7 * 64}) {
      EXPECT_EQ(merge.Quotient(x), x / m) << "m " << m << " x " << x;
      EXPECT_EQ(merge.Divides(x), x % m == 0) << "m " << m << " x " << x;
    }
  }
}

TEST(MergeDivisor, PlannerWithAMergeSizeOfThree) {
  ModelConfig config = PresetConfig("qwen2_vl").value();
  config.spatial_merge_size = 3;
  // A 6x9 image merges to 2x3: text 0..1, start marker 2, grid base 3, end marker 3 + 2 + 1.
  auto seq = SequencePositions::Create(config, {Span::Text(2), Span::Image({1, 6, 9})});
  ASSERT_TRUE(seq.ok()) << seq.status();
  EXPECT_EQ(seq->num_tokens(), 2 + 1 + 6 + 1);
  EXPECT_EQ(seq->max_position(), 6);
  EXPECT_EQ(seq->spans()[1].merged_grid.h, 2);
  EXPECT_EQ(seq->spans()[1].merged_grid.w, 3);
  const auto bad = SequencePositions::Create(config, {Span::Image({1, 6, 8})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("divisible by spatial_merge_size 3"), std::string::npos)
      << bad.status();
}

}  // namespace
}  // namespace mrope
