#ifndef MROPE_ROTARY_COS_SIN_TABLE_H_
#define MROPE_ROTARY_COS_SIN_TABLE_H_

// Precomputed fp32 cos/sin table [max_position][rotary_dim / 2]: entry (p, j) is
// PairCosSin(inv_freq[j], p, attention_scaling) (mrope/rotary/rope_math.h), the very numbers the
// on-the-fly path computes, so both sources agree bit for bit.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mrope/rotary/rope_math.h"

namespace mrope {

// Cap on max_position * num_pairs (per array; cos and sin are 512 MiB each at the cap).
inline constexpr int64_t kMaxCosSinTableEntries = int64_t{1} << 27;

class CosSinTable {
 public:
  // Validates before allocating: 1 <= inv_freq.size() <= kMaxRotaryPairs with finite entries,
  // finite attention_scaling, 1 <= max_position <= kMaxPosition (2^24), and
  // max_position * inv_freq.size() <= kMaxCosSinTableEntries.
  static absl::StatusOr<CosSinTable> Create(std::vector<float> inv_freq, float attention_scaling,
                                            int64_t max_position);

  int64_t max_position() const { return max_position_; }
  int num_pairs() const { return static_cast<int>(inv_freq_.size()); }
  const std::vector<float>& inv_freq() const { return inv_freq_; }
  float attention_scaling() const { return attention_scaling_; }

  // Requires 0 <= position < max_position() and 0 <= pair < num_pairs().
  CosSin Get(int64_t position, int pair) const {
    const int64_t i = position * num_pairs() + pair;
    return {cos_[i], sin_[i]};
  }

  // Row-major [max_position][num_pairs] arrays, e.g. to copy to a device.
  absl::Span<const float> cos() const { return cos_; }
  absl::Span<const float> sin() const { return sin_; }

 private:
  CosSinTable(std::vector<float> inv_freq, float attention_scaling, int64_t max_position);

  std::vector<float> inv_freq_;
  float attention_scaling_;
  int64_t max_position_;
  std::vector<float> cos_;
  std::vector<float> sin_;
};

}  // namespace mrope

#endif  // MROPE_ROTARY_COS_SIN_TABLE_H_
