// The CUDA kernel against the CPU reference (mrope/rotary/apply.h). Every test that needs a
// GPU skips itself (GTEST_SKIP) when the CUDA runtime reports no device, or fails with the
// CUDA error when MROPE_REQUIRE_GPU=1 (a GPU check must not pass by skipping); the argument
// tests at the end run everywhere. kernels/host_harness runs these tests on the CPU.

#include "kernels/mrope_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/gpu_util.h"
#include "kernels/launch_plan.h"
#include "mrope/common/json.h"
#include "mrope/model/family_rotary.h"
#include "mrope/rotary/apply.h"
#include "mrope/rotary/axis_map.h"
#include "mrope/rotary/cos_sin_table.h"
#include "mrope/rotary/half_float.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/rope_params.h"
#include "mrope/rotary/rotary_case.h"
#include "mrope/rotary/rotary_spec.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/testing/rotary_testing.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace {

using gpu_util::DeviceBuffer;

enum class AxisMapKind { kBlocked, kInterleaved, kExplicit, kHwAlternatingThenT, kXd };

// How q and k are stored: slices of a fused [T][(Hq + 2 Hk) * D] qkv buffer, two contiguous
// tensors, or two head-major [H][T][D] tensors.
enum class Storage { kFused, kSeparate, kHeadMajor };

struct KernelCase {
  DType dtype = DType::kBFloat16;
  RotaryLayout layout = RotaryLayout::kNeox;
  int64_t num_tokens = 17;
  int hq = 4;
  int hk = 2;
  int head_dim = 128;
  int rotary_dim = 128;
  AxisMapKind axis_map = AxisMapKind::kBlocked;
  int xd_axes = 4;  // kXd: XD-RoPE sections over this many axes (HunYuan-VL: four)
  Storage storage = Storage::kFused;
  int misalign = 0;  // elements before q: 1 breaks 16-byte alignment (scalar path)
  bool int32_positions = false;
  float attention_scaling = 1.0f;
  SinCosMath sincos_math = SinCosMath::kDouble;
};

int64_t BufferElements(const KernelCase& c) {
  const int heads = c.storage == Storage::kFused ? c.hq + 2 * c.hk : c.hq + c.hk;
  return c.misalign + c.num_tokens * heads * c.head_dim;
}

// q and k views of a buffer laid out as `c` says (host or device memory alike).
std::pair<HeadsView, HeadsView> Views(const KernelCase& c, void* base) {
  const int64_t t = c.num_tokens;
  const int64_t d = c.head_dim;
  const int64_t size = ElementSize(c.dtype);
  char* q = static_cast<char*>(base) + c.misalign * size;
  switch (c.storage) {
    case Storage::kFused: {
      const int64_t ts = (c.hq + 2 * c.hk) * d;
      return {{q, c.dtype, t, c.hq, c.head_dim, ts, d},
              {q + c.hq * d * size, c.dtype, t, c.hk, c.head_dim, ts, d}};
    }
    case Storage::kSeparate:
      return {{q, c.dtype, t, c.hq, c.head_dim, c.hq * d, d},
              {q + t * c.hq * d * size, c.dtype, t, c.hk, c.head_dim, c.hk * d, d}};
    case Storage::kHeadMajor:
      return {{q, c.dtype, t, c.hq, c.head_dim, d, t * d},
              {q + t * c.hq * d * size, c.dtype, t, c.hk, c.head_dim, d, t * d}};
  }
  return {};
}

RotarySpec MakeSpec(const KernelCase& c, std::mt19937& rng) {
  RotarySpec spec;
  spec.head_dim = c.head_dim;
  spec.rotary_dim = c.rotary_dim;
  spec.layout = c.layout;
  spec.attention_scaling = c.attention_scaling;
  spec.sincos_math = c.sincos_math;
  const int pairs = c.rotary_dim / 2;
  switch (c.axis_map) {
    case AxisMapKind::kBlocked: {  // [16, 24, 24] at 64 pairs
      const int s = 3 * pairs / 8;
      spec.axis_map = BlockedAxisMap({pairs - 2 * s, s, s}, pairs).value();
      break;
    }
    case AxisMapKind::kInterleaved: {  // [24, 20, 20] at 64 pairs
      const int s = 5 * pairs / 16;
      spec.axis_map = InterleavedAxisMap({pairs - 2 * s, s, s}, pairs).value();
      break;
    }
    case AxisMapKind::kHwAlternatingThenT: {  // ERNIE-4.5-VL's [22, 22, 20] ([h, w, t]) at 64
      const int s = 11 * pairs / 32;
      spec.axis_map = HwAlternatingThenTAxisMap({s, s, pairs - 2 * s}, pairs).value();
      break;
    }
    case AxisMapKind::kXd: {  // [16, 16, 16, 16] at 64 pairs and four axes
      std::vector<int32_t> sections(c.xd_axes, pairs / c.xd_axes);
      sections[0] += pairs % c.xd_axes;
      spec.axis_map = XdAxisMap(sections, pairs).value();
      break;
    }
    case AxisMapKind::kExplicit: {
      std::vector<int32_t> axes(pairs);
      for (int32_t& a : axes) a = static_cast<int32_t>(rng() % kNumAxes);
      spec.axis_map = ExplicitAxisMap(axes).value();
      break;
    }
  }
  for (int j = 0; j < pairs; ++j) {  // Qwen2-VL rope_theta = 1e6
    spec.inv_freq.push_back(static_cast<float>(std::pow(1e6, -2.0 * j / c.rotary_dim)));
  }
  return spec;
}

// Uploads `input`, runs the kernel with `args` (position / table / error_flag fields already
// set to device memory; q and k are filled in here) and returns the rotated buffer.
// The same with the kernel enqueued by `launch` (given the complete arguments).
std::vector<uint8_t> RotateOnDevice(const KernelCase& c, const std::vector<uint8_t>& input,
                                    MropeKernelArgs args,
                                    const std::function<void(const MropeKernelArgs&)>& launch) {
  DeviceBuffer buffer(input.size());
  buffer.Upload(input.data(), input.size());
  std::tie(args.q, args.k) = Views(c, buffer.data());
  launch(args);
  gpu_util::Synchronize();
  std::vector<uint8_t> output(input.size());
  buffer.Download(output.data(), output.size());
  return output;
}

std::vector<uint8_t> RotateOnDevice(const KernelCase& c, const RotarySpec& spec,
                                    const std::vector<uint8_t>& input, MropeKernelArgs args) {
  return RotateOnDevice(c, input, args, [&](const MropeKernelArgs& complete) {
    const absl::Status status = LaunchMropeKernel(spec, complete, nullptr);
    EXPECT_TRUE(status.ok()) << status;
  });
}

// A case with planar int64 positions of a video prompt, ready to run: the spec, the input, the
// reference result after `reference_passes` rotations, and the device positions and error
// flag (args has both set; RotateOnDevice fills in q and k).
struct PlanarCase {
  RotarySpec spec;
  std::vector<uint8_t> input;
  std::vector<uint8_t> expected;
  DeviceBuffer positions;
  DeviceBuffer flag;
  MropeKernelArgs args;
};

PlanarCase MakePlanarCase(const KernelCase& c, uint32_t seed, int64_t max_base,
                          int reference_passes = 1,
                          RotationDirection direction = RotationDirection::kForward) {
  std::mt19937 rng(seed);
  RotarySpec spec = MakeSpec(c, rng);
  const std::vector<int64_t> positions =
      AxisPositions(AxisCount(spec.axis_map), c.num_tokens, max_base, rng);
  std::vector<uint8_t> input = RandomStorage(c.dtype, BufferElements(c), rng);
  std::vector<uint8_t> expected = input;
  const auto [q, k] = Views(c, expected.data());
  for (int pass = 0; pass < reference_passes; ++pass) {
    EXPECT_TRUE(ApplyMropeReference(spec, {positions.data(), true, c.num_tokens, c.num_tokens},
                                    q, k, direction)
                    .ok());
  }
  PlanarCase planar{std::move(spec), std::move(input), std::move(expected),
                    UploadPositions(positions, false), DeviceBuffer(sizeof(int)), {}};
  planar.flag.Zero();
  planar.args.positions = {planar.positions.data(), true, c.num_tokens, c.num_tokens};
  planar.args.error_flag = planar.flag.As<int>();
  planar.args.direction = direction;
  return planar;
}

// Distance in representable values between two 16-bit floats of one format.
int32_t Ulps16(uint16_t a, uint16_t b) {
  const auto ordered = [](uint16_t x) {
    return (x & 0x8000u) != 0 ? -static_cast<int32_t>(x & 0x7fffu) : static_cast<int32_t>(x);
  };
  return std::abs(ordered(a) - ordered(b));
}

// Every element (rotated, passed-through and untouched) must match: bit for bit with
// `exact`, else within one ulp for bf16/fp16 and within fp32 rounding of cos/sin for fp32
// (the device's double sincos may, rarely, round to a neighbouring fp32 value).
void ExpectMatches(DType dtype, const std::vector<uint8_t>& expected,
                   const std::vector<uint8_t>& actual, bool exact) {
  ASSERT_EQ(expected.size(), actual.size());
  const int size = ElementSize(dtype);
  const int64_t elements = static_cast<int64_t>(expected.size()) / size;
  int64_t inexact = 0;
  int64_t bad = 0;
  std::string first_bad;
  for (int64_t i = 0; i < elements; ++i) {
    if (std::memcmp(&expected[i * size], &actual[i * size], size) == 0) continue;
    ++inexact;
    bool close = false;
    if (dtype == DType::kFloat32) {
      float e, a;
      std::memcpy(&e, &expected[4 * i], 4);
      std::memcpy(&a, &actual[4 * i], 4);
      close = std::abs(e - a) <= 0x1p-20f * std::max(1.0f, std::abs(e));
      if (!close && first_bad.empty()) first_bad = absl::StrCat(i, ": ", e, " vs ", a);
    } else {
      uint16_t e, a;
      std::memcpy(&e, &expected[2 * i], 2);
      std::memcpy(&a, &actual[2 * i], 2);
      close = Ulps16(e, a) <= 1;
      if (!close && first_bad.empty()) {
        first_bad = absl::StrCat(i, ": bits ", e, " vs ", a);
      }
    }
    if (!close || exact) ++bad;
  }
  EXPECT_EQ(bad, 0) << "of " << elements << " " << DTypeName(dtype) << " elements, " << inexact
                    << " differ (exact=" << exact << "); first beyond tolerance: " << first_bad;
  if (!exact && dtype == DType::kFloat32) {
    EXPECT_LE(inexact, elements / 1000) << "fp32 should be bit-exact but for rare sincos ulps";
  }
}

// ---------------------------------------------------------------------------------------------
// The grid of shapes, dtypes and layouts; axis map, storage, partial rotary, position width,
// alignment and attention scaling vary deterministically across its cells.

using GridParam = std::tuple<int64_t, std::pair<int, int>, int, DType, RotaryLayout>;

KernelCase GridCase(const GridParam& param) {
  KernelCase c;
  std::pair<int, int> heads;
  std::tie(c.num_tokens, heads, c.head_dim, c.dtype, c.layout) = param;
  std::tie(c.hq, c.hk) = heads;
  const uint32_t v =
      static_cast<uint32_t>(c.num_tokens * 31 + c.hq * 7 + c.head_dim * 3 +
                            static_cast<int>(c.dtype) * 11 + static_cast<int>(c.layout) * 13);
  c.axis_map = static_cast<AxisMapKind>(v % 3);
  static constexpr Storage kStorages[] = {Storage::kFused, Storage::kFused, Storage::kSeparate,
                                          Storage::kHeadMajor};
  c.storage = kStorages[(v / 3) % 4];
  c.rotary_dim = (v / 12) % 3 == 0 ? c.head_dim / 2 : c.head_dim;  // partial rotary
  c.int32_positions = (v / 2) % 2 == 1;
  c.misalign = (v / 5) % 7 == 0 ? 1 : 0;
  c.attention_scaling = v % 5 == 0 ? 0.75f : 1.0f;
  return c;
}

class KernelGridTest : public ::testing::TestWithParam<GridParam> {};

TEST_P(KernelGridTest, MatchesCpuReference) {
  MROPE_SKIP_WITHOUT_GPU();
  const KernelCase c = GridCase(GetParam());
  std::mt19937 rng(static_cast<uint32_t>(c.num_tokens * 1000003 + c.head_dim * 101 + c.hq));
  const RotarySpec spec = MakeSpec(c, rng);
  const std::vector<int64_t> positions = VideoPositions(c.num_tokens, 100000, rng);
  const std::vector<uint8_t> input = RandomStorage(c.dtype, BufferElements(c), rng);

  std::vector<uint8_t> expected = input;
  const auto [q, k] = Views(c, expected.data());
  const PositionsView host_positions{positions.data(), true, c.num_tokens, c.num_tokens};
  ASSERT_TRUE(ApplyMropeReference(spec, host_positions, q, k).ok());

  const DeviceBuffer device_positions = UploadPositions(positions, c.int32_positions);
  DeviceBuffer flag(sizeof(int));
  flag.Zero();
  MropeKernelArgs args;
  args.positions = {device_positions.data(), !c.int32_positions, c.num_tokens, c.num_tokens};
  args.error_flag = flag.As<int>();
  const std::vector<uint8_t> actual = RotateOnDevice(c, spec, input, args);
  EXPECT_EQ(ReadFlag(flag), 0);
  ExpectMatches(c.dtype, expected, actual, /*exact=*/false);
}

std::string GridName(const ::testing::TestParamInfo<GridParam>& info) {
  const KernelCase c = GridCase(info.param);
  static constexpr const char* kAxisMaps[] = {"blocked", "interleaved", "explicit",
                                              "hw_alternating_then_t"};
  static constexpr const char* kStorages[] = {"fused", "separate", "headmajor"};
  return absl::StrCat("T", c.num_tokens, "_H", c.hq, "x", c.hk, "_D", c.head_dim, "_R",
                      c.rotary_dim, "_", DTypeName(c.dtype), "_",
                      c.layout == RotaryLayout::kNeox ? "neox" : "gptj", "_",
                      kAxisMaps[static_cast<int>(c.axis_map)], "_",
                      kStorages[static_cast<int>(c.storage)], c.misalign != 0 ? "_misaligned" : "");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, KernelGridTest,
    ::testing::Combine(::testing::Values<int64_t>(1, 3, 17, 1000),
                       ::testing::Values(std::make_pair(28, 4), std::make_pair(32, 8),
                                         std::make_pair(2, 2)),
                       ::testing::Values(64, 128, 256, 80),
                       ::testing::Values(DType::kFloat32, DType::kBFloat16, DType::kFloat16),
                       ::testing::Values(RotaryLayout::kNeox, RotaryLayout::kGptj)),
    GridName);

// ---------------------------------------------------------------------------------------------
// Paths the grid may not hit in every dtype/layout combination.

class KernelPathTest : public ::testing::TestWithParam<std::tuple<DType, RotaryLayout>> {
 protected:
  KernelCase Case() const {
    KernelCase c;
    std::tie(c.dtype, c.layout) = GetParam();
    return c;
  }
};

// Runs `c` with planar int64 positions (inv_freq path) and compares with the reference.
// Returns the spec it ran.
RotarySpec RunPlanar(const KernelCase& c, uint32_t seed = 7, int64_t max_base = 50000,
                     RotationDirection direction = RotationDirection::kForward) {
  const PlanarCase planar = MakePlanarCase(c, seed, max_base, 1, direction);
  // fp32 sincos is the same float operations on host and device: bit-exact.
  ExpectMatches(c.dtype, planar.expected,
                RotateOnDevice(c, planar.spec, planar.input, planar.args),
                /*exact=*/c.sincos_math == SinCosMath::kFloat32);
  EXPECT_EQ(ReadFlag(planar.flag), 0);
  return planar.spec;
}

TEST_P(KernelPathTest, Float32SinCosIsBitExact) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c = Case();
  c.num_tokens = 40;
  c.sincos_math = SinCosMath::kFloat32;
  c.attention_scaling = 0.75f;
  RunPlanar(c);
}

// The backward pass (the rotation by -angle) on the vector and scalar paths, bit for bit with
// the reference's inverse (fp32 sincos: the same operations on host and device).
TEST_P(KernelPathTest, InverseRotationIsTheReferenceBackward) {
  MROPE_SKIP_WITHOUT_GPU();
  for (const int misalign : {0, 1}) {
    KernelCase c = Case();
    c.num_tokens = 23;
    c.misalign = misalign;
    c.sincos_math = SinCosMath::kFloat32;
    RunPlanar(c, /*seed=*/9, /*max_base=*/90000, RotationDirection::kInverse);
  }
}

TEST_P(KernelPathTest, ScalarPathForMisalignedViews) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c = Case();
  c.misalign = 1;
  RunPlanar(c);
}

TEST_P(KernelPathTest, ScalarPathForOddPairCounts) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c = Case();
  c.head_dim = 96;
  c.rotary_dim = 20;  // 10 pairs: not a multiple of any 16-byte access
  c.axis_map = AxisMapKind::kExplicit;
  RunPlanar(c);
}

TEST_P(KernelPathTest, HeadMajorViewsAndManyTokensPerBlock) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c = Case();
  c.storage = Storage::kHeadMajor;
  c.num_tokens = 333;
  c.hq = 1;
  c.hk = 1;
  c.head_dim = 64;
  c.rotary_dim = 64;
  RunPlanar(c);
}

TEST_P(KernelPathTest, MaxHeadDim) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c = Case();
  c.head_dim = 512;
  c.rotary_dim = 512;
  c.hq = 5;
  c.hk = 3;
  c.axis_map = AxisMapKind::kInterleaved;
  RunPlanar(c);
}

TEST_P(KernelPathTest, SmallBatchSplitsHeads) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c = Case();
  c.num_tokens = 5;
  c.hq = 64;  // Qwen2.5-VL-72B
  c.hk = 8;
  RunPlanar(c);
}

// The fp32 table built by mrope::CosSinTable holds exactly the reference's cos/sin, so the
// table path is bit-exact in every dtype. Laid out as a vLLM cos_sin_cache (row = cos | sin).
TEST_P(KernelPathTest, TablePathIsBitExact) {
  MROPE_SKIP_WITHOUT_GPU();
  // Three axes, and XD-RoPE's four (NeoX): a pair's halves look up rows of their own axes.
  for (const AxisMapKind axis_map : {AxisMapKind::kInterleaved, AxisMapKind::kXd}) {
    KernelCase c = Case();
    if (axis_map == AxisMapKind::kXd && c.layout == RotaryLayout::kGptj) continue;
    c.axis_map = axis_map;
    c.num_tokens = 300;
    c.hq = 8;
    constexpr int64_t kTableRows = 4096;
    std::mt19937 rng(11);
    const RotarySpec spec = MakeSpec(c, rng);
    const std::vector<int64_t> positions =
        AxisPositions(AxisCount(spec.axis_map), c.num_tokens, 3000, rng);
    const std::vector<uint8_t> input = RandomStorage(c.dtype, BufferElements(c), rng);
    const CosSinTable table =
        CosSinTable::Create(spec.inv_freq, spec.attention_scaling, kTableRows).value();

    std::vector<uint8_t> expected = input;
    const auto [q, k] = Views(c, expected.data());
    ASSERT_TRUE(
        ApplyMropeWithTable(spec, table, {positions.data(), true, c.num_tokens, c.num_tokens}, q, k)
            .ok());

    const int pairs = c.rotary_dim / 2;
    std::vector<float> cache(kTableRows * 2 * pairs);
    for (int64_t p = 0; p < kTableRows; ++p) {
      for (int j = 0; j < pairs; ++j) {
        cache[p * 2 * pairs + j] = table.cos()[p * pairs + j];
        cache[p * 2 * pairs + pairs + j] = table.sin()[p * pairs + j];
      }
    }
    DeviceBuffer device_cache(cache.size() * sizeof(float));
    device_cache.Upload(cache.data(), cache.size() * sizeof(float));
    const DeviceBuffer device_positions = UploadPositions(positions, true);
    DeviceBuffer flag(sizeof(int));
    flag.Zero();
    MropeKernelArgs args;
    args.positions = {device_positions.data(), false, c.num_tokens, c.num_tokens};
    args.table = {device_cache.As<float>(), device_cache.As<float>() + pairs, kTableRows,
                  2 * pairs};
    args.error_flag = flag.As<int>();
    RotarySpec table_spec = spec;
    table_spec.inv_freq.clear();  // not used with a table
    ExpectMatches(c.dtype, expected, RotateOnDevice(c, table_spec, input, args), /*exact=*/true);
    EXPECT_EQ(ReadFlag(flag), 0);
  }
}

// Decode without a [3][T] tensor: rotates with position = token_index + delta[sequence] on
// every axis on the device and compares with the reference on the equivalent [3][T] positions.
// An empty `seq_id` means one token per sequence (the kernel gets seq_id == nullptr).
void ExpectSequenceDeltaMatches(KernelCase c, const std::vector<int64_t>& token_index,
                                const std::vector<int32_t>& seq_id,
                                const std::vector<int64_t>& delta, uint32_t seed) {
  c.num_tokens = static_cast<int64_t>(token_index.size());
  std::mt19937 rng(seed);
  const RotarySpec spec = MakeSpec(c, rng);
  const std::vector<uint8_t> input = RandomStorage(c.dtype, BufferElements(c), rng);
  const int num_axes = AxisCount(spec.axis_map);
  std::vector<int64_t> positions(num_axes * c.num_tokens);
  for (int64_t i = 0; i < c.num_tokens; ++i) {
    const int64_t sequence = seq_id.empty() ? i : seq_id[i];
    for (int axis = 0; axis < num_axes; ++axis) {
      positions[axis * c.num_tokens + i] = token_index[i] + delta[sequence];
    }
  }
  std::vector<uint8_t> expected = input;
  const auto [q, k] = Views(c, expected.data());
  ASSERT_TRUE(
      ApplyMropeReference(spec, {positions.data(), true, c.num_tokens, c.num_tokens}, q, k).ok());

  DeviceBuffer d_index(token_index.size() * sizeof(int64_t));
  d_index.Upload(token_index.data(), token_index.size() * sizeof(int64_t));
  DeviceBuffer d_seq(std::max<size_t>(seq_id.size(), 1) * sizeof(int32_t));
  if (!seq_id.empty()) d_seq.Upload(seq_id.data(), seq_id.size() * sizeof(int32_t));
  DeviceBuffer d_delta(delta.size() * sizeof(int64_t));
  d_delta.Upload(delta.data(), delta.size() * sizeof(int64_t));
  DeviceBuffer flag(sizeof(int));
  flag.Zero();
  MropeKernelArgs args;
  args.sequence_delta = {d_index.As<int64_t>(), seq_id.empty() ? nullptr : d_seq.As<int32_t>(),
                         d_delta.As<int64_t>(), c.num_tokens,
                         static_cast<int64_t>(delta.size())};
  args.error_flag = flag.As<int>();
  ExpectMatches(c.dtype, expected, RotateOnDevice(c, spec, input, args), /*exact=*/false);
  EXPECT_EQ(ReadFlag(flag), 0);
}

// The specs of the transformers v5.2.0 families whose rotary is neither Qwen's nor GLM-4.1V's:
// ERNIE-4.5-VL (h/w alternating then t, whole head) and GLM-Image (blocked [8, 12, 12] over half
// of a 128 head); both pairings in every dtype (KernelPathTest's parameters).
TEST_P(KernelPathTest, ErnieAxisMap) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c = Case();
  c.axis_map = AxisMapKind::kHwAlternatingThenT;
  RunPlanar(c);
}

TEST_P(KernelPathTest, GlmImageSpec) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c = Case();
  c.hq = 32;
  c.hk = 2;
  c.rotary_dim = 64;  // blocked [8, 12, 12] at 32 pairs
  RunPlanar(c);
}

TEST_P(KernelPathTest, SequenceDeltaPositions) {
  MROPE_SKIP_WITHOUT_GPU();
  // Continuous batch: seq 0 continues a chunked prefill (20 tokens), seq 1 decodes one token,
  // seq 2 starts (16 tokens).
  std::vector<int32_t> seq_id;
  std::vector<int64_t> token_index;
  for (int i = 0; i < 20; ++i) seq_id.push_back(0), token_index.push_back(100 + i);
  seq_id.push_back(1), token_index.push_back(5000);
  for (int i = 0; i < 16; ++i) seq_id.push_back(2), token_index.push_back(i);
  ExpectSequenceDeltaMatches(Case(), token_index, seq_id, {-37, 98765, 0}, /*seed=*/5);
}

// One token per sequence (seq_id == nullptr): token i uses delta[i].
TEST_P(KernelPathTest, SequenceDeltaOneTokenPerSequence) {
  MROPE_SKIP_WITHOUT_GPU();
  ExpectSequenceDeltaMatches(Case(), {10, 11, 500, 7, 9999, 0, 1, 123456}, /*seq_id=*/{},
                             {0, -5, 70000, 3, -9000, 42, 99999, -100000}, /*seed=*/9);
}

// XD-RoPE (HunYuan-VL): a pair's halves on different axes, over more than three axes. NeoX
// only: the kernels refuse GPT-J pairs with split halves (XD's halves are NeoX halves).
TEST_P(KernelPathTest, XdRopeOverFourToEightAxes) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c = Case();
  c.axis_map = AxisMapKind::kXd;
  c.sincos_math = SinCosMath::kFloat32;  // the same float operations: bit for bit
  if (c.layout == RotaryLayout::kGptj) {
    const PlanarCase planar = MakePlanarCase(c, /*seed=*/31, /*max_base=*/40000);
    MropeKernelArgs args = planar.args;
    DeviceBuffer buffer(planar.input.size());
    std::tie(args.q, args.k) = Views(c, buffer.data());
    const absl::Status status = LaunchMropeKernel(planar.spec, args, nullptr);
    EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
    EXPECT_NE(status.message().find("XD-RoPE"), absl::string_view::npos) << status;
    return;
  }
  // Four axes on the vector path with one pass and with the passes in flight (prefill), on the
  // scalar path, and rotated backwards; five and eight axes (fewer tokens per block:
  // RotationShared's position slots), the last on the scalar path.
  struct Variant {
    int axes;
    int64_t tokens;
    int misalign;
    RotationDirection direction;
    int rotary_dim = 128;
  };
  const int64_t prefill = kernel_internal::kSplitHeadsBelowTokens + 40;
  for (const Variant& v : {Variant{4, 17, 0, RotationDirection::kForward},
                           Variant{4, prefill, 0, RotationDirection::kForward},
                           Variant{4, 23, 1, RotationDirection::kForward},
                           Variant{4, 29, 0, RotationDirection::kInverse},
                           Variant{5, 41, 0, RotationDirection::kForward},
                           Variant{8, 37, 1, RotationDirection::kForward},
                           // Position slots, not cos/sin, bound the tokens per block.
                           Variant{8, prefill, 0, RotationDirection::kForward, 32}}) {
    SCOPED_TRACE(absl::StrCat(v.axes, " axes, ", v.tokens, " tokens, misalign ", v.misalign,
                              ", rotary_dim ", v.rotary_dim));
    c.xd_axes = v.axes;
    c.num_tokens = v.tokens;
    c.misalign = v.misalign;
    c.rotary_dim = v.rotary_dim;
    EXPECT_EQ(AxisCount(RunPlanar(c, /*seed=*/17, /*max_base=*/60000, v.direction).axis_map),
              v.axes);
  }
}

TEST_P(KernelPathTest, XdRopeSequenceDelta) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c = Case();
  if (c.layout == RotaryLayout::kGptj) GTEST_SKIP() << "XD-RoPE pairs are NeoX halves";
  c.axis_map = AxisMapKind::kXd;
  ExpectSequenceDeltaMatches(c, {10, 11, 500, 7, 9999, 0, 1, 123456}, /*seq_id=*/{},
                             {0, -5, 70000, 3, -9000, 42, 99999, -100000}, /*seed=*/19);
}

std::string PathName(const ::testing::TestParamInfo<std::tuple<DType, RotaryLayout>>& info) {
  return absl::StrCat(DTypeName(std::get<0>(info.param)), "_",
                      std::get<1>(info.param) == RotaryLayout::kNeox ? "neox" : "gptj");
}

INSTANTIATE_TEST_SUITE_P(
    DTypesAndLayouts, KernelPathTest,
    ::testing::Combine(::testing::Values(DType::kFloat32, DType::kBFloat16, DType::kFloat16),
                       ::testing::Values(RotaryLayout::kNeox, RotaryLayout::kGptj)),
    PathName);

// ---------------------------------------------------------------------------------------------
// Every rotary golden case (tests/golden/rotary_*: Qwen chunked and interleaved M-RoPE, each
// scaling method, GLM-4.1V's GPT-J pairs and GLM-4.5V's NeoX halves over half of each head,
// sections [8,12,12]; the transformers v5.2.0 families, ERNIE's axis map among them, each with
// its family's layouts): the kernel gives the CPU reference's result, which
// tests/rotary/golden_test.cc checks against HF transformers.

// `view` of host vector `host` moved to the same offset in device buffer `device`.
template <typename T>
T* OnDevice(const std::vector<std::remove_const_t<T>>& host, T* view, const DeviceBuffer& device) {
  return static_cast<T*>(device.data()) + (view - host.data());
}

std::vector<uint8_t> Bytes(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

class KernelGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelGoldenTest, MatchesCpuReference) {
  MROPE_SKIP_WITHOUT_GPU();
  const absl::StatusOr<google::protobuf::Value> doc = ReadJsonFile(GetParam());
  ASSERT_TRUE(doc.ok()) << doc.status();
  absl::StatusOr<RotaryCase> c = ParseRotaryCase(*doc);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(UseFamilyRotary(*c).ok());  // the family's pairing and axis map
  const absl::StatusOr<RotarySpec> spec =
      BuildRotarySpec(c->params, c->layout, SequenceLength(*c));
  ASSERT_TRUE(spec.ok()) << spec.status();

  std::vector<float> expected_q = c->q, expected_k = c->k;
  DeviceBuffer q(c->q.size() * sizeof(float)), k(c->k.size() * sizeof(float));
  DeviceBuffer positions(c->positions.size() * sizeof(int64_t));
  DeviceBuffer flag(sizeof(int));
  q.Upload(c->q.data(), c->q.size() * sizeof(float));
  k.Upload(c->k.data(), c->k.size() * sizeof(float));
  positions.Upload(c->positions.data(), c->positions.size() * sizeof(int64_t));
  flag.Zero();
  for (int64_t b = 0; b < c->batch; ++b) {
    const PositionsView host_positions = BatchPositions(*c, b);
    const HeadsView host_q = BatchHeads(expected_q, c->q_shape, b);
    const HeadsView host_k = BatchHeads(expected_k, c->k_shape, b);
    ASSERT_TRUE(ApplyMropeReference(*spec, host_positions, host_q, host_k).ok());
    MropeKernelArgs args;
    args.q = host_q;
    args.q.data = OnDevice(expected_q, static_cast<float*>(host_q.data), q);
    args.k = host_k;
    args.k.data = OnDevice(expected_k, static_cast<float*>(host_k.data), k);
    args.positions = host_positions;
    args.positions.data =
        OnDevice(c->positions, static_cast<const int64_t*>(host_positions.data), positions);
    args.error_flag = flag.As<int>();
    const absl::Status status = LaunchMropeKernel(*spec, args, nullptr);
    ASSERT_TRUE(status.ok()) << status;
  }
  gpu_util::Synchronize();
  EXPECT_EQ(ReadFlag(flag), 0);
  std::vector<float> actual_q(c->q.size()), actual_k(c->k.size());
  q.Download(actual_q.data(), actual_q.size() * sizeof(float));
  k.Download(actual_k.data(), actual_k.size() * sizeof(float));
  ExpectMatches(DType::kFloat32, Bytes(expected_q), Bytes(actual_q), /*exact=*/false);
  ExpectMatches(DType::kFloat32, Bytes(expected_k), Bytes(actual_k), /*exact=*/false);
}

INSTANTIATE_TEST_SUITE_P(RotaryCases, KernelGoldenTest,
                         ::testing::ValuesIn(::mrope::testing::RotaryGoldenCases()),
                         ::mrope::testing::GoldenCaseName);

// ---------------------------------------------------------------------------------------------
// Device-side errors: the token is skipped (left exactly as it was), the flag bit is set, and
// every other token is rotated as usual.

// Expected result when `bad_tokens` are skipped: the reference over positions with the bad
// tokens' positions replaced by valid ones, then those tokens' rows restored from `input`.
std::vector<uint8_t> ExpectedWithSkips(const KernelCase& c, const RotarySpec& spec,
                                       const std::vector<uint8_t>& input,
                                       std::vector<int64_t> positions,
                                       const std::vector<int64_t>& bad_tokens) {
  for (int64_t t : bad_tokens) {
    for (int axis = 0; axis < AxisCount(spec.axis_map); ++axis) {
      positions[axis * c.num_tokens + t] = 0;
    }
  }
  std::vector<uint8_t> expected = input;
  const auto [q, k] = Views(c, expected.data());
  EXPECT_TRUE(
      ApplyMropeReference(spec, {positions.data(), true, c.num_tokens, c.num_tokens}, q, k).ok());
  const int64_t row_bytes = (c.hq + 2 * c.hk) * c.head_dim * ElementSize(c.dtype);  // kFused
  for (int64_t t : bad_tokens) {
    std::memcpy(&expected[t * row_bytes], &input[t * row_bytes], row_bytes);
  }
  return expected;
}

TEST(KernelErrorTest, PositionOutsideTableSkipsTheToken) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c;
  c.num_tokens = 40;
  c.head_dim = 64;
  c.rotary_dim = 64;
  constexpr int64_t kTableRows = 1024;
  std::mt19937 rng(3);
  const RotarySpec spec = MakeSpec(c, rng);
  std::vector<int64_t> positions = VideoPositions(c.num_tokens, 500, rng);
  const std::vector<uint8_t> input = RandomStorage(c.dtype, BufferElements(c), rng);
  const std::vector<int64_t> bad = {5, 17, 39};
  const std::vector<uint8_t> expected = ExpectedWithSkips(c, spec, input, positions, bad);
  positions[1 * c.num_tokens + 5] = kTableRows;  // h one past the table
  positions[0 * c.num_tokens + 17] = -3;         // negative t
  positions[2 * c.num_tokens + 39] = 5000;       // w far past the table

  const CosSinTable table =
      CosSinTable::Create(spec.inv_freq, spec.attention_scaling, kTableRows).value();
  DeviceBuffer d_cos(table.cos().size() * sizeof(float));
  d_cos.Upload(table.cos().data(), table.cos().size() * sizeof(float));
  DeviceBuffer d_sin(table.sin().size() * sizeof(float));
  d_sin.Upload(table.sin().data(), table.sin().size() * sizeof(float));
  const DeviceBuffer device_positions = UploadPositions(positions, false);
  DeviceBuffer flag(sizeof(int));
  flag.Zero();
  MropeKernelArgs args;
  args.positions = {device_positions.data(), true, c.num_tokens, c.num_tokens};
  args.table = {d_cos.As<float>(), d_sin.As<float>(), kTableRows, c.rotary_dim / 2};
  args.error_flag = flag.As<int>();
  ExpectMatches(c.dtype, expected, RotateOnDevice(c, spec, input, args), /*exact=*/true);
  EXPECT_EQ(ReadFlag(flag), kMropeErrorPositionOutOfRange);
}

TEST(KernelErrorTest, PositionOutsideExactFloatRangeSkipsTheToken) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c;
  c.num_tokens = 9;
  std::mt19937 rng(4);
  const RotarySpec spec = MakeSpec(c, rng);
  std::vector<int64_t> positions = VideoPositions(c.num_tokens, 500, rng);
  const std::vector<uint8_t> input = RandomStorage(c.dtype, BufferElements(c), rng);
  const std::vector<int64_t> bad = {2, 8};
  const std::vector<uint8_t> expected = ExpectedWithSkips(c, spec, input, positions, bad);
  positions[0 * c.num_tokens + 2] = kMaxPosition;
  positions[2 * c.num_tokens + 8] = -1;
  const DeviceBuffer device_positions = UploadPositions(positions, false);
  DeviceBuffer flag(sizeof(int));
  flag.Zero();
  MropeKernelArgs args;
  args.positions = {device_positions.data(), true, c.num_tokens, c.num_tokens};
  args.error_flag = flag.As<int>();
  ExpectMatches(c.dtype, expected, RotateOnDevice(c, spec, input, args), /*exact=*/false);
  EXPECT_EQ(ReadFlag(flag), kMropeErrorPositionOutOfRange);
}

// A bad position on an axis beyond the third (XD-RoPE) skips its token like any other.
TEST(KernelErrorTest, XdPositionOutOfRangeOnTheFourthAxisSkipsTheToken) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c;
  c.num_tokens = 30;
  c.axis_map = AxisMapKind::kXd;
  std::mt19937 rng(6);
  const RotarySpec spec = MakeSpec(c, rng);
  std::vector<int64_t> positions = AxisPositions(4, c.num_tokens, 500, rng);
  const std::vector<uint8_t> input = RandomStorage(c.dtype, BufferElements(c), rng);
  const std::vector<uint8_t> expected = ExpectedWithSkips(c, spec, input, positions, {4, 29});
  positions[3 * c.num_tokens + 4] = -2;
  positions[3 * c.num_tokens + 29] = kMaxPosition;
  const DeviceBuffer device_positions = UploadPositions(positions, false);
  DeviceBuffer flag(sizeof(int));
  flag.Zero();
  MropeKernelArgs args;
  args.positions = {device_positions.data(), true, c.num_tokens, c.num_tokens};
  args.error_flag = flag.As<int>();
  ExpectMatches(c.dtype, expected, RotateOnDevice(c, spec, input, args), /*exact=*/false);
  EXPECT_EQ(ReadFlag(flag), kMropeErrorPositionOutOfRange);
}

TEST(KernelErrorTest, SequenceIdOutOfRangeSkipsTheToken) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c;
  c.num_tokens = 8;
  const std::vector<int32_t> seq_id = {0, 0, 1, 3, 1, 2, -1, 2};  // 3 sequences
  const std::vector<int64_t> token_index = {0, 1, 7, 8, 8, 40, 41, 41};
  const std::vector<int64_t> delta = {10, 2000, -20};
  std::vector<int64_t> positions(kNumAxes * c.num_tokens);
  for (int64_t i = 0; i < c.num_tokens; ++i) {
    const int64_t seq = seq_id[i] >= 0 && seq_id[i] < 3 ? seq_id[i] : 0;
    for (int axis = 0; axis < kNumAxes; ++axis) {
      positions[axis * c.num_tokens + i] = token_index[i] + delta[seq];
    }
  }
  std::mt19937 rng(8);
  const RotarySpec spec = MakeSpec(c, rng);
  const std::vector<uint8_t> input = RandomStorage(c.dtype, BufferElements(c), rng);
  const std::vector<uint8_t> expected = ExpectedWithSkips(c, spec, input, positions, {3, 6});

  DeviceBuffer d_index(token_index.size() * sizeof(int64_t));
  d_index.Upload(token_index.data(), token_index.size() * sizeof(int64_t));
  DeviceBuffer d_seq(seq_id.size() * sizeof(int32_t));
  d_seq.Upload(seq_id.data(), seq_id.size() * sizeof(int32_t));
  DeviceBuffer d_delta(delta.size() * sizeof(int64_t));
  d_delta.Upload(delta.data(), delta.size() * sizeof(int64_t));
  DeviceBuffer flag(sizeof(int));
  flag.Zero();
  MropeKernelArgs args;
  args.sequence_delta = {d_index.As<int64_t>(), d_seq.As<int32_t>(), d_delta.As<int64_t>(),
                         c.num_tokens, 3};
  args.error_flag = flag.As<int>();
  ExpectMatches(c.dtype, expected, RotateOnDevice(c, spec, input, args), /*exact=*/false);
  EXPECT_EQ(ReadFlag(flag), kMropeErrorSequenceOutOfRange);
}

// ---------------------------------------------------------------------------------------------

// The launch records into a CUDA graph (no sync, no allocation inside) and replays correctly.
TEST(KernelGraphTest, CapturesAndReplays) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c;
  c.num_tokens = 64;
  const PlanarCase planar =
      MakePlanarCase(c, /*seed=*/12, /*max_base=*/90000, /*reference_passes=*/2);  // 2 replays
  absl::Status status = absl::UnknownError("not captured");
  std::string replay;
  const std::vector<uint8_t> actual =
      RotateOnDevice(c, planar.input, planar.args, [&](const MropeKernelArgs& args) {
        replay = gpu_util::CaptureAndReplay(
            [&](GpuStream stream) { status = LaunchMropeKernel(planar.spec, args, stream); }, 2);
      });
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(replay, "");
  ExpectMatches(c.dtype, planar.expected, actual, /*exact=*/false);
  EXPECT_EQ(ReadFlag(planar.flag), 0);
}

// ---------------------------------------------------------------------------------------------
// The kernel's two loops. Heads: at T >= kSplitHeadsBelowTokens one block covers every head of
// its tokens, in passes of blockDim.y heads when they need more threads than a block has.
// Token groups: a grid capped below the number of token groups makes each block handle
// several groups, reusing shared memory behind the loop's trailing barrier.

class KernelLoopTest : public ::testing::TestWithParam<std::tuple<DType, RotaryLayout>> {
 protected:
  KernelCase Case() const {
    KernelCase c;
    std::tie(c.dtype, c.layout) = GetParam();
    return c;
  }
};

TEST_P(KernelLoopTest, HeadPassesInsideABlock) {
  MROPE_SKIP_WITHOUT_GPU();
  // {hq, hk, misalign}: vector path with every pass in flight (and, for fp32 with 72 heads, one
  // more); the scalar path (misaligned views: 64 threads per head) with one pass in flight and
  // two more one at a time.
  for (const auto& [hq, hk, misalign] : {std::make_tuple(32, 8, 0), std::make_tuple(64, 8, 0),
                                         std::make_tuple(8, 2, 1)}) {
    KernelCase c = Case();
    c.num_tokens = kernel_internal::kSplitHeadsBelowTokens + 76;
    c.hq = hq;
    c.hk = hk;
    c.misalign = misalign;
    c.axis_map = AxisMapKind::kInterleaved;
    RunPlanar(c);
  }
}

TEST_P(KernelLoopTest, BlocksLoopOverTokenGroups) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c = Case();
  c.num_tokens = 203;  // the last group is partial
  c.hq = 6;
  c.hk = 2;
  c.head_dim = 64;
  c.rotary_dim = 64;
  const PlanarCase planar = MakePlanarCase(c, /*seed=*/21, /*max_base=*/70000);
  const std::vector<uint8_t> actual =
      RotateOnDevice(c, planar.input, planar.args, [&](const MropeKernelArgs& args) {
        const absl::StatusOr<kernel_internal::LaunchPlan> plan =
            kernel_internal::PlanMropeLaunch(planar.spec, args, {/*max_grid_x=*/3});
        ASSERT_TRUE(plan.ok()) << plan.status();
        ASSERT_EQ(plan->grid_x, 3u);
        ASSERT_GT(c.num_tokens, 3 * int64_t{plan->block_z});  // several groups per block
        EXPECT_EQ(kernel_internal::EnqueueMropeKernel(*plan, nullptr).cuda_error, 0);
      });
  ExpectMatches(c.dtype, planar.expected, actual, /*exact=*/false);
  EXPECT_EQ(ReadFlag(planar.flag), 0);
}

INSTANTIATE_TEST_SUITE_P(
    DTypesAndLayouts, KernelLoopTest,
    ::testing::Combine(::testing::Values(DType::kFloat32, DType::kBFloat16, DType::kFloat16),
                       ::testing::Values(RotaryLayout::kNeox, RotaryLayout::kGptj)),
    PathName);

// A launch reports its own error only: an earlier failure of an unrelated CUDA call stays in
// the thread's last-error state for its owner, and does not fail the launch.
TEST(KernelLaunchTest, LeavesEarlierErrorsAlone) {
  MROPE_SKIP_WITHOUT_GPU();
  KernelCase c;
  const PlanarCase planar = MakePlanarCase(c, /*seed=*/30, /*max_base=*/1000);
  const int unrelated = gpu_util::ProvokeUnrelatedError();
  ASSERT_NE(unrelated, 0);
  const std::vector<uint8_t> actual = RotateOnDevice(c, planar.spec, planar.input, planar.args);
  EXPECT_EQ(gpu_util::TakeLastError(), unrelated);
  ExpectMatches(c.dtype, planar.expected, actual, /*exact=*/false);
}

// ---------------------------------------------------------------------------------------------
// No GPU needed: invalid arguments are refused before any CUDA call, and an empty batch
// launches nothing.

TEST(LaunchArgumentsTest, InvalidArgumentsFailBeforeTouchingTheGpu) {
  KernelCase c;
  std::mt19937 rng(1);
  RotarySpec spec = MakeSpec(c, rng);
  spec.head_dim = 514;
  alignas(16) static uint16_t fake_storage[64];
  int fake_flag = 0;
  MropeKernelArgs args;
  std::tie(args.q, args.k) = Views(c, fake_storage);
  args.error_flag = &fake_flag;
  const absl::Status status = LaunchMropeKernel(spec, args, nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("spec.head_dim=514"), std::string::npos) << status;
}

TEST(LaunchArgumentsTest, EmptyBatchLaunchesNothing) {
  KernelCase c;
  c.num_tokens = 0;
  std::mt19937 rng(1);
  const RotarySpec spec = MakeSpec(c, rng);
  alignas(16) static uint16_t fake_storage[64];
  int64_t fake_positions[3] = {};
  int fake_flag = 0;
  MropeKernelArgs args;
  std::tie(args.q, args.k) = Views(c, fake_storage);
  args.positions = {fake_positions, true, 0, 0};
  args.error_flag = &fake_flag;
  EXPECT_TRUE(LaunchMropeKernel(spec, args, nullptr).ok());
}

}  // namespace
}  // namespace mrope
