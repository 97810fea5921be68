// The kernel on training layouts (issue 28): a packed (THD) batch of mixed text / image / video
// samples rotated with its packed positions equals each sample rotated alone, and a
// context-parallel rank's tokens rotated with its slice's positions equal those tokens of the
// whole rotated batch, forward and backward. On a GPU or the host execution harness.

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/gpu_util.h"
#include "kernels/mrope_kernel.h"
#include "mrope/positions/context_parallel.h"
#include "mrope/positions/sequence_positions.h"
#include "mrope/rotary/axis_map.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/testing/positions_testing.h"

namespace mrope {
namespace {

using gpu_util::DeviceBuffer;

constexpr int kHq = 4;
constexpr int kHk = 2;
constexpr int kHeadDim = 128;
constexpr int64_t kTokenElements = (kHq + kHk) * kHeadDim;  // q then k of one token, bf16

RotarySpec Qwen25VlSpec() {
  RotarySpec spec;
  spec.head_dim = kHeadDim;
  spec.rotary_dim = kHeadDim;
  spec.sincos_math = SinCosMath::kFloat32;
  spec.axis_map = BlockedAxisMap({16, 24, 24}, kHeadDim / 2).value();
  for (int j = 0; j < kHeadDim / 2; ++j) {
    spec.inv_freq.push_back(static_cast<float>(std::pow(1e6, -2.0 * j / kHeadDim)));
  }
  return spec;
}

// Rotates `tokens` rows of [q (Hq heads) | k (Hk heads)] bf16 in place on the device with
// planar int64 positions [3][tokens].
std::vector<uint8_t> Rotate(const RotarySpec& spec, std::vector<uint8_t> rows,
                            const std::vector<int64_t>& positions, RotationDirection direction) {
  const int64_t tokens = static_cast<int64_t>(positions.size() / 3);
  DeviceBuffer data(rows.size());
  data.Upload(rows.data(), rows.size());
  const DeviceBuffer device_positions = UploadPositions(positions, /*as_int32=*/false);
  DeviceBuffer flag(sizeof(int));
  flag.Zero();
  MropeKernelArgs args;
  args.q = {data.data(), DType::kBFloat16, tokens, kHq, kHeadDim, kTokenElements, kHeadDim};
  args.k = {data.As<uint16_t>() + kHq * kHeadDim, DType::kBFloat16, tokens, kHk, kHeadDim,
            kTokenElements, kHeadDim};
  args.positions = {device_positions.data(), true, tokens, tokens};
  args.error_flag = flag.As<int>();
  args.direction = direction;
  const absl::Status status = LaunchMropeKernel(spec, args, nullptr);
  EXPECT_TRUE(status.ok()) << status;
  gpu_util::Synchronize();
  data.Download(rows.data(), rows.size());
  EXPECT_EQ(ReadFlag(flag), 0);
  return rows;
}

std::vector<int64_t> Planar(const SequencePositions& seq, int64_t end) {
  const auto axes = Window<int64_t>(seq, 0, end);
  std::vector<int64_t> planar = axes.t;
  planar.insert(planar.end(), axes.h.begin(), axes.h.end());
  planar.insert(planar.end(), axes.w.begin(), axes.w.end());
  return planar;
}

class PackedKernelTest : public ::testing::TestWithParam<RotationDirection> {};

TEST_P(PackedKernelTest, PackedBatchEqualsEachSampleAlone) {
  MROPE_SKIP_WITHOUT_GPU();
  const RotarySpec spec = Qwen25VlSpec();
  const std::vector<SequencePositions> samples = MixedSamples();
  const auto packed = PackSequences<int64_t>(samples);
  ASSERT_TRUE(packed.ok()) << packed.status();
  const int64_t total = packed->total_tokens;
  std::mt19937 rng(28);
  const std::vector<uint8_t> input = RandomStorage(DType::kBFloat16, total * kTokenElements, rng);
  const std::vector<int64_t> positions(packed->positions.begin(), packed->positions.end());
  const std::vector<uint8_t> rotated = Rotate(spec, input, positions, GetParam());
  const int64_t row_bytes = kTokenElements * 2;
  for (size_t i = 0; i < samples.size(); ++i) {
    const int64_t begin = packed->cu_seqlens[i];
    const int64_t end = packed->cu_seqlens[i + 1];
    const std::vector<uint8_t> alone =
        Rotate(spec, std::vector<uint8_t>(input.begin() + begin * row_bytes,
                                          input.begin() + end * row_bytes),
               Planar(samples[i], samples[i].num_tokens()), GetParam());
    EXPECT_EQ(0, std::memcmp(alone.data(), rotated.data() + begin * row_bytes, alone.size()))
        << "sample " << i;
  }
}

// Each context-parallel rank rotates only its tokens, with its slice's positions: the result
// is those tokens of the whole padded batch rotated at once.
TEST_P(PackedKernelTest, ContextParallelRanksEqualTheWholeBatch) {
  MROPE_SKIP_WITHOUT_GPU();
  const RotarySpec spec = Qwen25VlSpec();
  const std::vector<SequencePositions> samples = MixedSamples();
  constexpr int kCpSize = 2;
  std::vector<int64_t> padded;
  std::vector<int64_t> whole_positions[3];
  for (const SequencePositions& seq : samples) {
    padded.push_back((seq.num_tokens() + 2 * kCpSize - 1) / (2 * kCpSize) * (2 * kCpSize) + 4);
    const auto axes = Window<int64_t>(seq, 0, padded.back());
    whole_positions[0].insert(whole_positions[0].end(), axes.t.begin(), axes.t.end());
    whole_positions[1].insert(whole_positions[1].end(), axes.h.begin(), axes.h.end());
    whole_positions[2].insert(whole_positions[2].end(), axes.w.begin(), axes.w.end());
  }
  std::vector<int64_t> whole = whole_positions[0];
  whole.insert(whole.end(), whole_positions[1].begin(), whole_positions[1].end());
  whole.insert(whole.end(), whole_positions[2].begin(), whole_positions[2].end());
  const int64_t total = static_cast<int64_t>(whole.size() / 3);
  std::mt19937 rng(29);
  const std::vector<uint8_t> input = RandomStorage(DType::kBFloat16, total * kTokenElements, rng);
  const std::vector<uint8_t> rotated = Rotate(spec, input, whole, GetParam());
  const int64_t row_bytes = kTokenElements * 2;
  for (int rank = 0; rank < kCpSize; ++rank) {
    const auto slice = ContextParallelSlice<int64_t>(samples, padded, kCpSize, rank);
    ASSERT_TRUE(slice.ok()) << slice.status();
    std::vector<uint8_t> local(slice->num_tokens * row_bytes);
    for (int64_t j = 0; j < slice->num_tokens; ++j) {
      std::memcpy(&local[j * row_bytes], &input[slice->token_index[j] * row_bytes], row_bytes);
    }
    const std::vector<uint8_t> out = Rotate(
        spec, local,
        std::vector<int64_t>(slice->positions.begin(), slice->positions.end()), GetParam());
    for (int64_t j = 0; j < slice->num_tokens; ++j) {
      ASSERT_EQ(0, std::memcmp(&out[j * row_bytes],
                               &rotated[slice->token_index[j] * row_bytes], row_bytes))
          << "rank " << rank << ", local token " << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Directions, PackedKernelTest,
                         ::testing::Values(RotationDirection::kForward,
                                           RotationDirection::kInverse),
                         [](const ::testing::TestParamInfo<RotationDirection>& info) {
                           return info.param == RotationDirection::kForward ? "Forward"
                                                                            : "Backward";
                         });

}  // namespace
}  // namespace mrope
