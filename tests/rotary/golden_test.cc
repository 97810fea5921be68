// Checks the rotary math against every HF transformers golden case (tests/golden/rotary_*:
// plain, scaling methods, GLM, the transformers v5.2.0 families of rotary_*_v5), each run with
// its reference family's layouts, discovered at run time from the test's data directories.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mrope/common/json.h"
#include "mrope/common/status_macros.h"
#include "mrope/model/family_rotary.h"
#include "mrope/rotary/apply.h"
#include "mrope/rotary/cos_sin_table.h"
#include "mrope/rotary/hf_cos_sin.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/rotary_case.h"
#include "tests/testing/rotary_testing.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace {

using ::mrope::testing::RotaryGoldenCases;
using ::mrope::testing::UlpDistance;

// One rotary golden case: the model and inputs (RotaryCase), run with its reference family's
// layouts (UseFamilyRotary: the case's config must agree with the family row), and HF's outputs.
struct GoldenCase : RotaryCase {
  CosSinLayout cos_layout = CosSinLayout::kCat;
  std::vector<float> inv_freq, cos, sin, q_rot, k_rot;
  std::vector<int64_t> cos_shape;
};

absl::StatusOr<std::vector<float>> Floats(const google::protobuf::Value& object,
                                          const std::string& key,
                                          std::vector<int64_t>* shape = nullptr) {
  MROPE_ASSIGN_OR_RETURN(const google::protobuf::Value* v, GetField(object, key, key));
  return AsFloatArray(*v, key, shape);
}

absl::StatusOr<GoldenCase> LoadCase(const std::string& path) {
  MROPE_ASSIGN_OR_RETURN(google::protobuf::Value doc, ReadJsonFile(path));
  GoldenCase c;
  MROPE_ASSIGN_OR_RETURN(static_cast<RotaryCase&>(c), ParseRotaryCase(doc));
  MROPE_ASSIGN_OR_RETURN(c.cos_layout, UseFamilyRotary(c));
  MROPE_ASSIGN_OR_RETURN(const google::protobuf::Value* outputs, GetField(doc, "outputs", "case"));
  MROPE_ASSIGN_OR_RETURN(c.inv_freq, Floats(*outputs, "inv_freq"));
  MROPE_ASSIGN_OR_RETURN(c.cos, Floats(*outputs, "cos", &c.cos_shape));
  MROPE_ASSIGN_OR_RETURN(c.sin, Floats(*outputs, "sin"));
  MROPE_ASSIGN_OR_RETURN(c.q_rot, Floats(*outputs, "q_rot"));
  MROPE_ASSIGN_OR_RETURN(c.k_rot, Floats(*outputs, "k_rot"));
  return c;
}

int64_t MaxUlp(const std::vector<float>& got, const std::vector<float>& want) {
  int64_t worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, UlpDistance(got[i], want[i]));
  return worst;
}

TEST(GoldenDataTest, EveryRotaryFolderHasCases) {
  std::set<std::string> folders;
  for (const std::string& path : RotaryGoldenCases()) {
    folders.insert(std::filesystem::path(path).parent_path().filename().string());
  }
  EXPECT_THAT(folders,
              ::testing::IsSupersetOf(
                  {"rotary_qwen2_vl", "rotary_qwen3_vl", "rotary_scaling_qwen2_vl",
                   "rotary_scaling_qwen3_vl", "rotary_glm4v", "rotary_glm4v_moe",
                   "rotary_qwen3_5_v5", "rotary_glm46v_v5", "rotary_glm_ocr_v5",
                   "rotary_glm_image_v5", "rotary_ernie4_5_vl_moe_v5"}));
}

class RotaryGoldenTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    absl::StatusOr<GoldenCase> loaded = LoadCase(GetParam());
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    c_ = *std::move(loaded);
    absl::StatusOr<RotarySpec> spec = BuildRotarySpec(c_.params, c_.layout, SequenceLength(c_));
    ASSERT_TRUE(spec.ok()) << spec.status();
    spec_ = *std::move(spec);
    ASSERT_EQ(c_.cos_shape.back(), spec_.rotary_dim);
    ASSERT_EQ(c_.cos_shape.size(), c_.cos_layout == CosSinLayout::kPerAxis ? 4u : 3u);
  }

  int64_t half() const { return spec_.rotary_dim / 2; }
  bool per_axis() const { return c_.cos_layout == CosSinLayout::kPerAxis; }

  // The stored cos/sin as per-pair rows [T][rotary_dim/2] of batch b, read through the family's
  // cos/sin layout: pair j's columns (on its own axis's slice for the per-axis layout) must all
  // hold the same number, which is checked.
  void StoredRows(int64_t b, std::vector<CosSin>& rows) const {
    rows.assign(c_.tokens * half(), CosSin{NAN, NAN});
    for (int64_t t = 0; t < c_.tokens; ++t) {
      for (int d = 0; d < spec_.rotary_dim; ++d) {
        const int j = CosSinColumnPair(c_.cos_layout, d, spec_.rotary_dim);
        const int64_t axis = per_axis() ? spec_.axis_map.axis[j] : 0;
        const int64_t i = ((axis * c_.batch + b) * c_.tokens + t) * spec_.rotary_dim + d;
        CosSin& row = rows[t * half() + j];
        if (std::isnan(row.cos)) {
          row = {c_.cos[i], c_.sin[i]};
          continue;
        }
        ASSERT_EQ(row.cos, c_.cos[i]) << "column " << d;
        ASSERT_EQ(row.sin, c_.sin[i]) << "column " << d;
      }
    }
  }

  // `got` (rotated with the library's own cos/sin) vs HF's `want` for input `x` [B][H][T][D].
  // torch's cos/sin are within 1-2 ulp of ours, not equal, and y = x1*c - x2*s can cancel, so
  // an output's distance is measured in ulp of its larger product term: a 1-ulp change of c or
  // s moves that term by about 1 ulp. Plain ulp distances above 4 are counted and recorded.
  // Dimensions from rotary_dim on pass through and must be equal.
  void ExpectRotatedWithinFourUlp(const std::vector<float>& got, const std::vector<float>& x,
                                  const std::vector<float>& want, int64_t heads) {
    int64_t beyond_plain = 0;
    double worst = 0.0;
    for (int64_t b = 0; b < c_.batch; ++b) {
      std::vector<CosSin> rows;
      ASSERT_NO_FATAL_FAILURE(StoredRows(b, rows));
      for (int64_t h = 0; h < heads; ++h) {
        for (int64_t t = 0; t < c_.tokens; ++t) {
          const int64_t base = ((b * heads + h) * c_.tokens + t) * spec_.head_dim;
          for (int64_t d = spec_.rotary_dim; d < spec_.head_dim; ++d) {
            ASSERT_EQ(got[base + d], want[base + d]) << "pass-through dimension " << d;
          }
          for (int j = 0; j < half(); ++j) {
            const CosSin cs = rows[t * half() + j];
            const int64_t i1 = base + PairFirstIndex(spec_.layout, j);
            const int64_t i2 = base + PairSecondIndex(spec_.layout, j, spec_.rotary_dim);
            const float x1 = x[i1], x2 = x[i2];
            const float scale1 = std::max(std::fabs(x1 * cs.cos), std::fabs(x2 * cs.sin));
            const float scale2 = std::max(std::fabs(x2 * cs.cos), std::fabs(x1 * cs.sin));
            for (const auto& [i, scale] :
                 {std::pair<int64_t, float>{i1, scale1}, std::pair<int64_t, float>{i2, scale2}}) {
              if (UlpDistance(got[i], want[i]) <= 4) continue;
              ++beyond_plain;
              const float ulp = std::nextafter(scale, INFINITY) - scale;
              worst = std::max(worst, std::fabs(double{got[i]} - want[i]) / ulp);
            }
          }
        }
      }
    }
    EXPECT_LE(worst, 4.0);
    RecordProperty("outputs_beyond_plain_4ulp", static_cast<int>(beyond_plain));
  }

  GoldenCase c_;
  RotarySpec spec_;
};

// Every method's float32 steps are HF's (rope_scaling.h, torch_powf.h).
// ERNIE's module stores inv_freq permuted (tests/golden/README.md): the h frequencies, then w,
// then t, each in frequency order. mrope keeps frequency order; the axis map gives the axis.
TEST_P(RotaryGoldenTest, InvFreqBitExact) {
  ASSERT_EQ(spec_.inv_freq.size(), c_.inv_freq.size());
  std::vector<float> stored_order = spec_.inv_freq;
  if (c_.params.mrope_layout == MropeLayout::kHwAlternatingThenT) {
    stored_order.clear();
    for (const int axis : {kAxisH, kAxisW, kAxisT}) {
      for (int j = 0; j < half(); ++j) {
        if (spec_.axis_map.axis[j] == axis) stored_order.push_back(spec_.inv_freq[j]);
      }
    }
  }
  EXPECT_EQ(MaxUlp(stored_order, c_.inv_freq), 0);
}

// What `mrope rotary --golden` prints: the family's cos/sin layout, from the positions.
TEST_P(RotaryGoldenTest, CosSinFromPositionIdsWithinTwoUlp) {
  std::vector<PositionsView> rows;
  for (int64_t b = 0; b < c_.batch; ++b) rows.push_back(BatchPositions(c_, b));
  absl::StatusOr<HfCosSin> got = ComputeHfCosSin(spec_, c_.cos_layout, rows);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->shape, c_.cos_shape);
  const int64_t cos_ulp = MaxUlp(got->cos, c_.cos), sin_ulp = MaxUlp(got->sin, c_.sin);
  EXPECT_LE(cos_ulp, 2);
  EXPECT_LE(sin_ulp, 2);
  RecordProperty("cos_sin_max_ulp", static_cast<int>(std::max(cos_ulp, sin_ulp)));
}

TEST_P(RotaryGoldenTest, ApplyWithStoredCosSinIsBitExact) {
  std::vector<float> q = c_.q, k = c_.k;
  for (int64_t b = 0; b < c_.batch; ++b) {
    std::vector<CosSin> rows;
    ASSERT_NO_FATAL_FAILURE(StoredRows(b, rows));
    ASSERT_TRUE(ApplyRotaryCosSin(spec_, rows, BatchHeads(q, c_.q_shape, b),
                                  BatchHeads(k, c_.k_shape, b))
                    .ok());
  }
  EXPECT_EQ(MaxUlp(q, c_.q_rot), 0);
  EXPECT_EQ(MaxUlp(k, c_.k_rot), 0);
}

TEST_P(RotaryGoldenTest, ApplyWithOwnCosSinWithinFourUlp) {
  std::vector<float> q = c_.q, k = c_.k;
  std::vector<float> q_table = c_.q, k_table = c_.k;
  absl::StatusOr<CosSinTable> table =
      CosSinTable::Create(spec_.inv_freq, spec_.attention_scaling, SequenceLength(c_));
  ASSERT_TRUE(table.ok()) << table.status();
  for (int64_t b = 0; b < c_.batch; ++b) {
    const PositionsView positions = BatchPositions(c_, b);
    ASSERT_TRUE(ApplyMropeReference(spec_, positions, BatchHeads(q, c_.q_shape, b),
                                    BatchHeads(k, c_.k_shape, b))
                    .ok());
    ASSERT_TRUE(ApplyMropeWithTable(spec_, *table, positions,
                                    BatchHeads(q_table, c_.q_shape, b),
                                    BatchHeads(k_table, c_.k_shape, b))
                    .ok());
  }
  ExpectRotatedWithinFourUlp(q, c_.q, c_.q_rot, c_.q_shape[1]);
  ExpectRotatedWithinFourUlp(k, c_.k, c_.k_rot, c_.k_shape[1]);
  EXPECT_EQ(MaxUlp(q_table, q), 0);
  EXPECT_EQ(MaxUlp(k_table, k), 0);
}

INSTANTIATE_TEST_SUITE_P(AllCases, RotaryGoldenTest, ::testing::ValuesIn(RotaryGoldenCases()),
                         ::mrope::testing::GoldenCaseName);

}  // namespace
}  // namespace mrope
