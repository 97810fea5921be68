// The fused chain's CPU reference (kernels/fused_reference.h; the kernel equals it bit for bit,
// fused_kernel_test.cc) on HuggingFace's attention-input cases (tests/golden/attn_*, README
// "Attention input cases"): per-head RMSNorm + M-RoPE of q and k against HF's outputs.
// Error is measured in ulps of the output dtype at the magnitude of each element's rotation
// pair, sqrt(y_j^2 + y_{j+R/2}^2) (|y| for dimensions past rotary_dim): a per-element ulp
// explodes where a rotation cancels. Bars (issue 24):
//   bfloat16: <= 1.5 ulp@pair from the exact (float64) outputs (HF's own bf16 chain: 2.3);
//   float32:  <= 8 ulp@pair from HF's outputs (both share the float32 angle).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/fused_reference_case.h"
#include "mrope/common/json.h"
#include "mrope/rotary/attention_case.h"

namespace mrope {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> CaseFiles() {
  std::vector<std::string> files;
  for (const char* dir : {"tests/golden/attn_qwen3_vl", "tests/golden/attn_qwen3_5"}) {
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The output dtype's ulp at magnitude m (bfloat16: 8 significant bits, float32: 24).
double UlpAt(double m, DType dtype) {
  const int mantissa_bits = dtype == DType::kBFloat16 ? 7 : 23;
  m = std::max(m, static_cast<double>(std::numeric_limits<float>::min()));
  return std::ldexp(1.0, std::ilogb(m) - mantissa_bits);
}

// Largest |actual - expected| in ulps at each element's rotation-pair magnitude (of expected).
double MaxUlpAtPair(const std::vector<float>& actual, const std::vector<float>& expected,
                    int head_dim, int rotary_dim, DType dtype) {
  double worst = 0;
  const int half = rotary_dim / 2;
  for (size_t i = 0; i < expected.size(); ++i) {
    const int dim = static_cast<int>(i % head_dim);
    double m = std::abs(static_cast<double>(expected[i]));
    if (dim < rotary_dim) {
      const size_t partner = dim < half ? i + half : i - half;
      m = std::hypot(static_cast<double>(expected[i]), static_cast<double>(expected[partner]));
    }
    const double error = std::abs(static_cast<double>(actual[i]) - expected[i]) / UlpAt(m, dtype);
    // A NaN counts as infinitely far (std::max would skip it).
    if (!(error <= worst)) worst = std::isfinite(error) ? error : HUGE_VAL;
  }
  return worst;
}

class FusedGoldenTest : public ::testing::TestWithParam<std::string> {};

// Worst ulp@pair per family and dtype over all cases, printed when the suite ends.
std::map<std::string, double>& WorstByGroup() {
  static auto* worst = new std::map<std::string, double>;
  return *worst;
}

TEST_P(FusedGoldenTest, MeetsTheAccuracyBar) {
  const auto doc = ReadJsonFile(GetParam());
  ASSERT_TRUE(doc.ok()) << doc.status();
  const auto c = ParseAttentionCase(*doc);
  ASSERT_TRUE(c.ok()) << c.status();
  const auto hf = ParseAttentionOutputs(*doc, *c);
  ASSERT_TRUE(hf.ok()) << hf.status();
  // The library's inv_freq is HF's buffer, bit for bit.
  ASSERT_EQ(c->spec.inv_freq.size(), hf->inv_freq.size());
  for (size_t j = 0; j < hf->inv_freq.size(); ++j) {
    EXPECT_EQ(c->spec.inv_freq[j], hf->inv_freq[j]) << "inv_freq[" << j << "]";
  }

  const auto out = RunFusedReference(*c);
  ASSERT_TRUE(out.ok()) << out.status();
  const bool bf16 = c->dtype == DType::kBFloat16;
  const std::vector<float>& q_ref = bf16 ? hf->q_out_exact : hf->q_out_hf;
  const std::vector<float>& k_ref = bf16 ? hf->k_out_exact : hf->k_out_hf;
  const double bar = bf16 ? 1.5 : 8.0;
  const int d = c->spec.head_dim;
  const int r = c->spec.rotary_dim;
  const double q_err = MaxUlpAtPair(out->q_out, q_ref, d, r, c->dtype);
  const double k_err = MaxUlpAtPair(out->k_out, k_ref, d, r, c->dtype);
  EXPECT_LE(q_err, bar) << "q, against " << (bf16 ? "q_out_exact" : "q_out_hf");
  EXPECT_LE(k_err, bar) << "k, against " << (bf16 ? "k_out_exact" : "k_out_hf");
  double& worst = WorstByGroup()[absl::StrCat(c->model, " ", bf16 ? "bfloat16" : "float32")];
  worst = std::max({worst, q_err, k_err});
}

INSTANTIATE_TEST_SUITE_P(AttentionCases, FusedGoldenTest, ::testing::ValuesIn(CaseFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = fs::path(info.param).parent_path().filename().string() +
                                              "_" + fs::path(info.param).stem().string();
                           return name;
                         });

TEST(FusedGoldenCasesTest, AllNinetySixArePresent) {
  EXPECT_EQ(CaseFiles().size(), 96u);
}

class PrintWorst : public ::testing::Environment {
 public:
  void TearDown() override {
    for (const auto& [group, worst] : WorstByGroup()) {
      std::printf("fused chain, worst ulp@pair: %s %.3f\n", group.c_str(), worst);
    }
  }
};
const auto* const kPrintWorst = ::testing::AddGlobalTestEnvironment(new PrintWorst);

}  // namespace
}  // namespace mrope
