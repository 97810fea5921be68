#ifndef MROPE_SERVICE_EXPLAIN_H_
#define MROPE_SERVICE_EXPLAIN_H_

// A readable account of where a prompt's positions come from, for a person debugging a
// misbehaving VL model: per row, every span with its kind, token range, grid, seconds per grid
// and the t/h/w position ranges of its tokens, then where the next token continues.

#include <string>

#include "absl/status/statusor.h"
#include "mrope/positions/batch.h"
#include "mrope/positions/model_config.h"

namespace mrope {

// The table for `plan` (planned under `config`). Media spans show the ranges of their media
// tokens (start/end markers excluded; the token range includes them); "next" is the position
// of the token after the span on every axis (for the last span: the first decode position of
// the unpadded sequence). Videos of several temporal grids also list the t position of each;
// families that write every frame as its own block (Qwen3-VL, GLM) show those spans as
// "video frame". Seconds per grid are shown only for families whose time reads them. An
// EVS-pruned vLLM request gets its totals and where vLLM computes otherwise (its defects).
absl::StatusOr<std::string> ExplainPlan(const ModelConfig& config, const BatchPlan& plan);

}  // namespace mrope

#endif  // MROPE_SERVICE_EXPLAIN_H_
