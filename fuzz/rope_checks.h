#ifndef MROPE_FUZZ_ROPE_CHECKS_H_
#define MROPE_FUZZ_ROPE_CHECKS_H_

// What valid rotary parameters promise, checked by the rope_params and config_json fuzzers:
// a RotarySpec in both layouts at any sequence length (dynamic NTK: or a clean refusal), with
// rotary_dim / 2 finite, non-negative inverse frequencies, one axis in {t, h, w} per pair and a
// finite, positive attention scaling.

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_input.h"
#include "mrope/rotary/rope_params.h"

namespace mrope {
namespace fuzz {

inline void CheckValidRope(const RopeParameters& rope, int64_t seq_len) {
  for (const RotaryLayout layout : {RotaryLayout::kNeox, RotaryLayout::kGptj}) {
    auto spec = BuildRotarySpec(rope, layout, seq_len);
    // Only dynamic NTK depends on the sequence length: its base may outgrow float32.
    if (!spec.ok() && rope.scaling.type == RopeType::kDynamic) return;
    FUZZ_CHECK(spec.ok(), absl::StrCat("valid parameters, no RotarySpec at seq_len ", seq_len,
                                       ": ", spec.status().ToString()));
    const int num_pairs = rope.scaling.rotary_dim / 2;
    FUZZ_CHECK(static_cast<int>(spec->inv_freq.size()) == num_pairs &&
                   spec->axis_map.num_pairs == num_pairs,
               "inv_freq / axis map size");
    for (int j = 0; j < num_pairs; ++j) {
      FUZZ_CHECK(std::isfinite(spec->inv_freq[j]) && spec->inv_freq[j] >= 0,
                 absl::StrCat("inv_freq[", j, "] = ", spec->inv_freq[j], " (rope_type ",
                              RopeTypeName(rope.scaling.type), ", theta ", rope.scaling.theta,
                              ", factor ", rope.scaling.factor, ", seq_len ", seq_len, ")"));
      FUZZ_CHECK(spec->axis_map.axis[j] < 3, absl::StrCat("axis_map.axis[", j, "]"));
    }
    FUZZ_CHECK(std::isfinite(spec->attention_scaling) && spec->attention_scaling > 0,
               absl::StrCat("attention_scaling ", spec->attention_scaling));
  }
}

}  // namespace fuzz
}  // namespace mrope

#endif  // MROPE_FUZZ_ROPE_CHECKS_H_
