#include "mrope/rotary/cos_sin_table.h"

#include <cmath>
#include <cstdint>
#include <utility>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "mrope/rotary/rope_math.h"

namespace mrope {

absl::StatusOr<CosSinTable> CosSinTable::Create(std::vector<float> inv_freq,
                                                float attention_scaling, int64_t max_position) {
  const int64_t num_pairs = static_cast<int64_t>(inv_freq.size());
  if (num_pairs < 1 || num_pairs > kMaxRotaryPairs) {
    return absl::InvalidArgumentError(absl::StrCat("cos/sin table: inv_freq must have 1 to ",
                                                   kMaxRotaryPairs, " entries, got ", num_pairs));
  }
  for (int64_t j = 0; j < num_pairs; ++j) {
    if (!std::isfinite(inv_freq[j])) {
      return absl::InvalidArgumentError(
          absl::StrCat("cos/sin table: inv_freq[", j, "] must be finite, got ", inv_freq[j]));
    }
  }
  if (!std::isfinite(attention_scaling)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cos/sin table: attention_scaling must be finite, got ", attention_scaling));
  }
  if (max_position < 1 || max_position > kMaxPosition) {
    return absl::InvalidArgumentError(absl::StrCat("cos/sin table: max_position must be in [1, ",
                                                   kMaxPosition, "], got ", max_position));
  }
  if (max_position * num_pairs > kMaxCosSinTableEntries) {
    return absl::InvalidArgumentError(
        absl::StrCat("cos/sin table: max_position * num_pairs = ", max_position, " * ", num_pairs,
                     " exceeds the limit of ", kMaxCosSinTableEntries, " entries"));
  }
  return CosSinTable(std::move(inv_freq), attention_scaling, max_position);
}

CosSinTable::CosSinTable(std::vector<float> inv_freq, float attention_scaling, int64_t max_position)
    : inv_freq_(std::move(inv_freq)),
      attention_scaling_(attention_scaling),
      max_position_(max_position),
      cos_(max_position * inv_freq_.size()),
      sin_(max_position * inv_freq_.size()) {
  const int pairs = num_pairs();
  for (int64_t p = 0; p < max_position_; ++p) {
    for (int j = 0; j < pairs; ++j) {
      const CosSin cs = PairCosSin(inv_freq_[j], static_cast<float>(p), attention_scaling_);
      cos_[p * pairs + j] = cs.cos;
      sin_[p * pairs + j] = cs.sin;
    }
  }
}

}  // namespace mrope
