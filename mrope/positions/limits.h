#ifndef MROPE_POSITIONS_LIMITS_H_
#define MROPE_POSITIONS_LIMITS_H_

#include <cstdint>

#include "absl/status/status.h"

namespace mrope {

// Resource limits for untrusted prompts, enforced before anything is allocated. Every refusal
// names the limit and the offending value. The defaults serve real 256k-token prompts with
// room to spare; a deployment may raise each up to its ceiling below (ValidatePositionLimits).
struct PositionLimits {
  int64_t max_tokens_per_row = int64_t{1} << 20;     // 1,048,576 tokens in one sequence
  int64_t max_batch_rows = 4096;
  int64_t max_total_tokens = int64_t{1} << 26;       // B * L of a padded batch
  int64_t max_grid_value = int64_t{1} << 16;         // each of t, h, w (patches before merge)
  int64_t max_grid_tokens = int64_t{1} << 20;        // t * h * w / merge^2 of one grid
  int64_t max_position = (int64_t{1} << 31) - 1;     // largest position value produced
  int64_t max_decode_steps = int64_t{1} << 24;       // decode window length
};

// The ceilings up to which a limit may be raised: the arithmetic they bound stays exact there.
// Token counts (per row, in all, per grid, decode steps) up to 2^40 keep their sums and the
// output's 3 * tokens * 8 bytes far inside int64; batch rows up to 2^20 keep B * L below 2^60;
// grid values up to 2^20 keep t * h * w below 2^60; positions up to 2^52, plus decode steps,
// stay below 2^53, where the planner's double positions are exact integers.
inline constexpr int64_t kMaxTokensCeiling = int64_t{1} << 40;
inline constexpr int64_t kMaxBatchRowsCeiling = int64_t{1} << 20;
inline constexpr int64_t kMaxGridValueCeiling = int64_t{1} << 20;
inline constexpr int64_t kMaxPositionCeiling = int64_t{1} << 52;

// Every limit in [1, its ceiling] (max_decode_steps in [0, its ceiling]). SequencePlanner (and
// so every planner), PackSequences and PositionService refuse other limits, naming the field.
absl::Status ValidatePositionLimits(const PositionLimits& limits);

// Largest token id accepted in input_ids. Ids are vocabulary indices: negative ids and ids above
// this bound are refused (they are not a resource limit, so not part of PositionLimits).
inline constexpr int64_t kMaxTokenId = int64_t{1} << 62;

}  // namespace mrope

#endif  // MROPE_POSITIONS_LIMITS_H_
