// Every family's rotary in bf16 against the exact rotation (issue 36): for each family row's
// preset rotary (mrope/model/model_family.cc) under every rope type, random bf16 q and k rotated
// by the CPU reference (mrope/rotary/apply.h) and by the kernel (on a GPU, or on the host
// harness), at positions up to 2^17, against the rotation computed in double from the bf16
// inputs and exact angles (position * inv_freq in double), and from the angles the reference
// defines (float32(inv_freq * float32(position)), HF's and mrope's).
//
// Within 1.5 bf16 ulp of the exact value plus what the float32 intermediates HF defines cost:
// cos and sin are float32 values (HF's module returns them, mrope's tables hold them), each
// product and the sum are rounded to float32 (HF's apply in float32), 4 roundings of at most
// 2^-24 of |x1| + |x2|; and from exact angles the float32 angle's own error (up to half its
// ulp: 2^-7 rad at 2^17) times |x1| + |x2|. Measured in bf16 ulps of the exact value alone the
// distance is unbounded where the pair's result cancels to near 0 (a float32 intermediate's
// absolute error over a tiny result): the test prints those maxima.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/gpu_util.h"
#include "kernels/mrope_kernel.h"
#include "mrope/model/model_family.h"
#include "mrope/rotary/apply.h"
#include "mrope/rotary/half_float.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/testing/preset_rope.h"

namespace mrope {
namespace {

using gpu_util::DeviceBuffer;

constexpr int64_t kTokens = 48;
constexpr int kHeads = 2;  // q's; k has 1

// The rope types the families' configs use, as config.json's rope_scaling objects.
std::vector<std::pair<std::string, std::string>> ScalingsFor(int pairs) {
  std::string short_factor, long_factor;
  for (int j = 0; j < pairs; ++j) {
    absl::StrAppend(&short_factor, j ? ", " : "", 1.0 + j % 7 * 0.125);
    absl::StrAppend(&long_factor, j ? ", " : "", 2.0 + j % 5 * 1.25);
  }
  return {
      {"default", ""},
      {"linear", R"({"rope_type": "linear", "factor": 4.0})"},
      {"dynamic", R"({"rope_type": "dynamic", "factor": 2.0})"},
      {"yarn", R"({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64})"},
      {"longrope", absl::StrCat(R"({"rope_type": "longrope", "short_factor": [)", short_factor,
                                R"(], "long_factor": [)", long_factor, "]}")},
      {"llama3", R"({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                     "high_freq_factor": 4.0, "original_max_position_embeddings": 64})"},
  };
}

double Bf16ToDouble(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, 4);
  return f;
}

// The bf16 ulp at `value` (8 significant bits; subnormals below 2^-126).
double Bf16Ulp(double value) {
  return std::ldexp(1.0, std::ilogb(std::max(std::abs(value), 0x1p-126)) - 7);
}

struct Maxima {
  // |got - exact| minus the float32 intermediates' share, in bf16 ulps of exact: <= 1.5.
  double bounded_reference = 0;
  double bounded_exact = 0;
  // |got - exact| in bf16 ulps of exact alone (reported).
  double strict_reference = 0;
  double strict_exact = 0;
};

// Folds the distances of the rotated `got` ([T][H][D] bf16 over `input`) into `m`.
void Measure(const RotarySpec& spec, const std::vector<int64_t>& positions,
             const std::vector<uint16_t>& input, const std::vector<uint16_t>& got, int heads,
             Maxima& m) {
  const int pairs = spec.rotary_dim / 2;
  const double scaling = spec.attention_scaling;
  for (int64_t t = 0; t < kTokens; ++t) {
    for (int h = 0; h < heads; ++h) {
      const int64_t base = (t * heads + h) * spec.head_dim;
      for (int j = 0; j < pairs; ++j) {
        const int64_t first = base + PairFirstIndex(spec.layout, j);
        const int64_t second = base + PairSecondIndex(spec.layout, j, spec.rotary_dim);
        const double x1 = Bf16ToDouble(input[first]), x2 = Bf16ToDouble(input[second]);
        const double magnitude = (std::abs(x1) + std::abs(x2)) * scaling;
        // Each element of the pair at the angle of its own axis (the pair's one axis, or for
        // XD-RoPE's split halves one each).
        for (const bool is_second : {false, true}) {
          const int axis = is_second && spec.axis_map.split_halves ? spec.axis_map.second_axis[j]
                                                                    : spec.axis_map.axis[j];
          const int64_t position = positions[axis * kTokens + t];
          // (strict, bounded) distances of the element to the rotation by `angle` in double,
          // the bounded one less `slack` (an absolute error the float32 intermediates allow).
          const auto distance = [&](double angle, double slack, double& strict,
                                    double& bounded) {
            const double c = std::cos(angle) * scaling, s = std::sin(angle) * scaling;
            const double exact = is_second ? x2 * c + x1 * s : x1 * c - x2 * s;
            const double ulp = Bf16Ulp(exact);
            const double error = std::abs(Bf16ToDouble(got[is_second ? second : first]) - exact);
            strict = std::max(strict, error / ulp);
            bounded = std::max(bounded, std::max(0.0, error - slack) / ulp);
          };
          const float reference = RotaryAngle(spec.inv_freq[j], static_cast<float>(position));
          const double exact = static_cast<double>(position) * spec.inv_freq[j];
          const double intermediates = 0x1p-22 * magnitude;
          distance(reference, intermediates, m.strict_reference, m.bounded_reference);
          distance(exact, intermediates + std::abs(reference - exact) * magnitude,
                   m.strict_exact, m.bounded_exact);
        }
      }
    }
  }
}

void Fold(const Maxima& m, Maxima& all) {
  all.bounded_reference = std::max(all.bounded_reference, m.bounded_reference);
  all.bounded_exact = std::max(all.bounded_exact, m.bounded_exact);
  all.strict_reference = std::max(all.strict_reference, m.strict_reference);
  all.strict_exact = std::max(all.strict_exact, m.strict_exact);
}

std::vector<uint16_t> RandomBf16(int64_t elements, std::mt19937& rng) {
  std::vector<uint8_t> bytes = RandomStorage(DType::kBFloat16, elements, rng);
  std::vector<uint16_t> out(elements);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

HeadsView View(std::vector<uint16_t>& data, int heads, int head_dim) {
  return {data.data(), DType::kBFloat16, kTokens, heads, head_dim,
          static_cast<int64_t>(heads) * head_dim, head_dim};
}

// Rotates copies of q and k on the device (or the host harness) and returns them.
std::pair<std::vector<uint16_t>, std::vector<uint16_t>> RotateOnDevice(
    const RotarySpec& spec, const std::vector<int64_t>& positions, std::vector<uint16_t> q,
    std::vector<uint16_t> k) {
  DeviceBuffer q_device(q.size() * 2), k_device(k.size() * 2), flag(sizeof(int));
  q_device.Upload(q.data(), q.size() * 2);
  k_device.Upload(k.data(), k.size() * 2);
  flag.Zero();
  const DeviceBuffer device_positions = UploadPositions(positions, false);
  MropeKernelArgs args;
  args.q = {q_device.data(), DType::kBFloat16, kTokens, kHeads, spec.head_dim,
            static_cast<int64_t>(kHeads) * spec.head_dim, spec.head_dim};
  args.k = {k_device.data(), DType::kBFloat16, kTokens, 1, spec.head_dim, spec.head_dim,
            spec.head_dim};
  args.positions = {device_positions.data(), true, kTokens, kTokens};
  args.error_flag = flag.As<int>();
  EXPECT_TRUE(LaunchMropeKernel(spec, args, nullptr).ok());
  gpu_util::Synchronize();
  EXPECT_EQ(ReadFlag(flag), 0);
  q_device.Download(q.data(), q.size() * 2);
  k_device.Download(k.data(), k.size() * 2);
  return {q, k};
}

TEST(Bf16ExactTest, EveryFamilyAndRopeTypeWithinOneAndAHalfUlp) {
  bool device = true;
  if (std::string no_device; gpu_util::DeviceCount(&no_device) == 0) {
    if (GpuRequired()) FAIL() << "MROPE_REQUIRE_GPU=1 but " << no_device;
    device = false;  // the CPU reference still runs
  }
  Maxima all;
  for (const ModelFamilyInfo& row : ModelFamilies()) {
    // XD-RoPE (HunYuan-VL): a row of positions per section, a pair's halves on their own axes.
    const int num_axes = row.rope.mrope_layout == MropeLayout::kXd
                             ? std::max<int>(kNumAxes, row.rope.mrope_section.size())
                             : kNumAxes;
    const int pairs = static_cast<int>(row.rope.head_dim * row.rope.partial_rotary_factor) / 2;
    for (const auto& [name, scaling] : ScalingsFor(pairs)) {
      SCOPED_TRACE(absl::StrCat(row.name, " ", name));
      std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>()(absl::StrCat(row.name, name))));
      std::vector<int64_t> positions(num_axes * kTokens);
      for (int64_t i = 0; i < num_axes * kTokens; ++i) {
        // A third each below 256, 4096 and 2^17 (HF's test range).
        const int64_t top = int64_t{1} << (8 + 4 * ((i % kTokens) % 3) + ((i % kTokens) % 3) / 2);
        positions[i] = static_cast<int64_t>(rng() % top);
      }
      const int64_t seq_len = *std::max_element(positions.begin(), positions.end()) + 1;
      const RotarySpec spec =
          BuildRotarySpec(PresetRopeUnder(row.preset, scaling), row.rope.layout, seq_len).value();
      const std::vector<uint16_t> q = RandomBf16(kTokens * kHeads * spec.head_dim, rng);
      const std::vector<uint16_t> k = RandomBf16(kTokens * spec.head_dim, rng);
      std::vector<uint16_t> cpu_q = q, cpu_k = k;
      ASSERT_TRUE(ApplyMropeReference(spec, {positions.data(), true, kTokens, kTokens},
                                      View(cpu_q, kHeads, spec.head_dim),
                                      View(cpu_k, 1, spec.head_dim))
                      .ok());
      Maxima m;
      Measure(spec, positions, q, cpu_q, kHeads, m);
      Measure(spec, positions, k, cpu_k, 1, m);
      if (device) {
        const auto [gpu_q, gpu_k] = RotateOnDevice(spec, positions, q, k);
        Measure(spec, positions, q, gpu_q, kHeads, m);
        Measure(spec, positions, k, gpu_k, 1, m);
      }
      EXPECT_LE(m.bounded_reference, 1.5);
      EXPECT_LE(m.bounded_exact, 1.5);
      Fold(m, all);
    }
  }
  std::printf("bf16 ulps of the exact value, max over every family and rope type (%s): "
              "beyond the float32 intermediates %.3f (reference angles) and %.3f (exact "
              "angles); alone %.1f and %.1f\n",
              device ? "CPU reference and kernel" : "CPU reference", all.bounded_reference,
              all.bounded_exact, all.strict_reference, all.strict_exact);
}

}  // namespace
}  // namespace mrope
