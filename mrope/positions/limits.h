#ifndef MROPE_POSITIONS_LIMITS_H_
#define MROPE_POSITIONS_LIMITS_H_

#include <cstdint>

namespace mrope {

// Resource limits for untrusted prompts, enforced before anything is allocated. Every refusal
// names the limit and the offending value. The defaults serve real 256k-token prompts with
// room to spare.
struct PositionLimits {
  int64_t max_tokens_per_row = int64_t{1} << 20;     // 1,048,576 tokens in one sequence
  int64_t max_batch_rows = 4096;
  int64_t max_total_tokens = int64_t{1} << 26;       // B * L of a padded batch
  int64_t max_grid_value = int64_t{1} << 16;         // each of t, h, w (patches before merge)
  int64_t max_grid_tokens = int64_t{1} << 20;        // t * h * w / merge^2 of one grid
  int64_t max_position = (int64_t{1} << 31) - 1;     // largest position value produced
  int64_t max_decode_steps = int64_t{1} << 24;       // decode window length
};

// Largest token id accepted in input_ids. Ids are vocabulary indices: negative ids and ids above
// this bound are refused (they are not a resource limit, so not part of PositionLimits).
inline constexpr int64_t kMaxTokenId = int64_t{1} << 62;

}  // namespace mrope

#endif  // MROPE_POSITIONS_LIMITS_H_
