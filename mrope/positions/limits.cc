#include "mrope/positions/limits.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace mrope {

absl::Status ValidatePositionLimits(const PositionLimits& limits) {
  struct Bound {
    const char* name;
    int64_t value;
    int64_t min;
    int64_t max;
  };
  for (const Bound& bound : {
           Bound{"max_tokens_per_row", limits.max_tokens_per_row, 1, kMaxTokensCeiling},
           Bound{"max_batch_rows", limits.max_batch_rows, 1, kMaxBatchRowsCeiling},
           Bound{"max_total_tokens", limits.max_total_tokens, 1, kMaxTokensCeiling},
           Bound{"max_grid_value", limits.max_grid_value, 1, kMaxGridValueCeiling},
           Bound{"max_grid_tokens", limits.max_grid_tokens, 1, kMaxTokensCeiling},
           Bound{"max_position", limits.max_position, 1, kMaxPositionCeiling},
           Bound{"max_decode_steps", limits.max_decode_steps, 0, kMaxTokensCeiling},
       }) {
    if (bound.value < bound.min || bound.value > bound.max) {
      return absl::InvalidArgumentError(absl::StrCat("limits: ", bound.name, " must be in [",
                                                     bound.min, ", ", bound.max, "], got ",
                                                     bound.value));
    }
  }
  return absl::OkStatus();
}

}  // namespace mrope
