#ifndef MROPE_CLI_ROTARY_COMMAND_H_
#define MROPE_CLI_ROTARY_COMMAND_H_

// `mrope rotary --golden CASE.json`: runs the rotary math on a rotary golden case
// (tests/golden/README.md, "Rotary case schema"; `outputs` may be absent) and prints, as one JSON
// object, what the library computes from the case's config, position ids, q and k:
//   cos, sin   the chunked variant (blocked mrope_section) as [3][B][T][rotary_dim], one slice
//              per axis; otherwise (interleaved, or 1-D) [B][T][rotary_dim] with the axis map
//              applied. Value d is that of pair d % (rotary_dim / 2), as HF's cat(freqs, freqs).
//   q_rot      [B][H][T][D], k_rot [B][Hk][T][D], with the library's own cos/sin, in the layout
//              of the case's `config.rotate` (GPT-J pairs for "interleaved_pairs", NeoX halves
//              for "half" or when absent); dims from rotary_dim pass through
// inv_freq is computed for seq_len = max position + 1 (what HF's dynamic update uses).
// On an attention-input case (README "Attention input cases": q and k before the per-head norm)
// it prints instead what the fused kernel's CPU reference computes (kernels/fused_reference.h:
// norm, M-RoPE, rounded once to the case's dtype):
//   q_out      [T][Hq][D], k_out [T][Hk][D]
// Floats are printed as the shortest decimals that read back as the same float32.

#include <ostream>
#include <string>

#include "absl/status/status.h"

namespace mrope {

absl::Status RunRotaryGolden(const std::string& case_path, std::ostream& out);

}  // namespace mrope

#endif  // MROPE_CLI_ROTARY_COMMAND_H_
