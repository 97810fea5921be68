// Fuzz target: rotary parameters as a runtime may hand them over directly (RopeParameters,
// mrope/rotary/rope_params.h), every scaling method, with edge values a JSON config cannot
// reach (any double, any float32 per-pair factor).
//
// Input (fuzz/fuzz_input.h, zeros past the end):
//   head_dim Dim, rope_type byte (% 8: 7 is not a type), rotary_dim Dim, theta Real, factor
//   Real, original_max_position_embeddings Wide, beta_fast Real, beta_slow Real, truncate bool,
//   low_freq_factor Real, high_freq_factor Real, attention_scaling Real, short_factor and
//   long_factor (count byte: 255 means rotary_dim / 2, each Real), mrope_section (count
//   byte % 5, each byte), mrope_layout byte (% 6: 5 is not a layout), seq_len Wide.
// Dim: a byte below 250 times 2, else a raw int32. Real: a byte indexing kReals, past its end a
// raw double. Wide: FuzzInput::Wide().
// Properties: whatever ValidateRopeParameters accepts passes fuzz/rope_checks.h, and
// ComputeInvFreq refuses a negative seq_len.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "fuzz/rope_checks.h"
#include "mrope/rotary/rope_params.h"

namespace mrope {
namespace fuzz {
namespace {

constexpr double kReals[] = {0.0,   1.0,    2.0,  4.0,   8.0,    32.0,  0.5,   0.1,
                             1e-3,  1e4,    1e6,  5e6,   1e300,  1e-300, -1.0, 1.0000001,
                             64.0,  4096.0, 1e-8, 131072, 1.5e-45};

int32_t Dim(FuzzInput& in) {
  const uint8_t b = in.Byte();
  return b < 250 ? 2 * b : static_cast<int32_t>(in.U32());
}

double Real(FuzzInput& in) {
  const uint8_t b = in.Byte();
  constexpr size_t kCount = sizeof(kReals) / sizeof(kReals[0]);
  return b < kCount ? kReals[b] : in.Float64();
}

std::vector<float> Factors(FuzzInput& in, int32_t rotary_dim) {
  const uint8_t count = in.Byte();
  std::vector<float> factors(count == 255 ? std::max(0, rotary_dim / 2) : count % 8);
  for (float& f : factors) f = static_cast<float>(Real(in));
  return factors;
}

}  // namespace
}  // namespace fuzz
}  // namespace mrope

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ::mrope;
  using namespace ::mrope::fuzz;
  FuzzInput in(data, size);
  RopeParameters p;
  p.head_dim = Dim(in);
  RopeScaling& s = p.scaling;
  s.type = static_cast<RopeType>(in.Byte() % 8);
  s.rotary_dim = Dim(in);
  s.theta = Real(in);
  s.factor = Real(in);
  s.original_max_position_embeddings = in.Wide();
  s.beta_fast = Real(in);
  s.beta_slow = Real(in);
  s.truncate = in.Bool();
  s.low_freq_factor = Real(in);
  s.high_freq_factor = Real(in);
  p.attention_scaling = static_cast<float>(Real(in));
  // Bounded so that a huge rotary_dim cannot make the fuzzer allocate.
  const int32_t pairs_dim = std::min(s.rotary_dim, 2 * kMaxRotaryPairs + 2);
  p.short_factor = Factors(in, pairs_dim);
  p.long_factor = Factors(in, pairs_dim);
  p.mrope_section.resize(in.Byte() % 5);
  for (int32_t& section : p.mrope_section) section = in.Byte();
  p.mrope_layout = static_cast<MropeLayout>(in.Byte() % 6);
  const int64_t seq_len = in.Wide();

  if (!ValidateRopeParameters(p).ok()) return 0;
  FUZZ_CHECK(!ComputeInvFreq(p, -1).ok(), "negative seq_len accepted");
  if (seq_len >= 0) CheckValidRope(p, seq_len);
  return 0;
}
