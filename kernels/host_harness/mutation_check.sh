#!/bin/bash
# Measures the reach of the kernel tests: plants one mutant at a time in the kernel source,
# runs the host-harness suites (plain, large offsets, TSan subset) and expects them to fail.
# Prints one line per mutant and exits non-zero if any mutant survived. The source is restored
# after each mutant (and on exit). Slow (a rebuild and the suites per mutant): run by hand,
#   kernels/host_harness/mutation_check.sh            # every mutant
#   kernels/host_harness/mutation_check.sh 3          # only mutant 3
set -uo pipefail
cd "$(dirname "$0")/../.."
kernel=kernels/mrope_kernel.cu
device=kernels/mrope_device.cuh
params=kernels/kernel_params.h
fused=kernels/fused_kernel.cu
fp8=mrope/rotary/fp8_e4m3.h
plan=kernels/launch_plan.cc
sources=("$kernel" "$device" "$params" "$fused" "$fp8" "$plan")
if ! git diff --quiet -- "${sources[@]}"; then
  echo "mutation_check: one of ${sources[*]} has uncommitted changes; commit or stash them" >&2
  exit 2
fi
trap 'git checkout -q -- "${sources[@]}"' EXIT

# file|original|mutant|what it breaks (\n in original and mutant: a newline)
mutants=(
  "$kernel|head += blockDim.y|head = head_end|head loop: only the first pass beyond those in flight"
  "$kernel|if (head < head_end) {\\n          RotateUnit|if (head == first_head) {\\n          RotateUnit|passes in flight: only the first one rotated"
  "$kernel|group += gridDim.x|group = p.num_tokens|token-group loop: only the first group"
  "$kernel|__syncthreads();  // shared memory is rewritten|// (trailing barrier removed)|trailing barrier of the token-group loop"
  "$kernel|__syncthreads();\\n\\n    // 3. cos/sin|// (barrier removed)\\n\\n    // 3. cos/sin|barrier between positions and cos/sin"
  "$device|token * p.q_token_stride|static_cast<int32_t>(token * p.q_token_stride)|32-bit q offsets"
  "$device|pair < kRotaryDim / 2; pair += 16|pair < kRotaryDim / 2 - 16; pair += 16|pair staging misses the last 16 pairs"
  "$params|>> (8 * (pair % 4))|>> (4 * (pair % 4))|packed pair axes read at the wrong shift"
  "$kernel|if (!TokenSkipped(AxisRow<kSplit>(shared.skip_axis, z, num_axes), num_axes))|if (true)|skipped (bad-position) tokens rotated anyway"
  "$device|unit * kVec + num_pairs;|unit * kVec + num_pairs - kVec;|vector path: wrong second half"
  "$fused|RmsScale(ButterflySum(&fused.partial[buffer][tid - lane], lanes)|RmsScale(ButterflySum(&fused.partial[buffer][tid], lanes)|fused: norm reduction over the wrong lanes"
  "$fused|Store(&fused.partial[buffer][tid], partial);\\n      __syncthreads();|Store(&fused.partial[buffer][tid], partial);|fused: barrier between staging and the norm / partner reads"
  "$fused|, buffer ^= 1, ++pass)|, ++pass)|fused: stage single-buffered"
  "$fused|if (NormFirst<kXdForms>(norm.form)) {\\n              partial|if (false) {\\n              partial|fused: squares never summed"
  "$fused|head_dim,\\n                           norm.eps)|head_dim,\\n                           0.0f)|fused: norm eps ignored"
  "$fused|(slot % p.block_size) * p.cache_slot_stride|(slot % p.block_size) * p.cache_head_stride|fused: slot offset steps by the head stride"
  "$fused|int64_t{head} * p.cache_head_stride|int64_t{head} * p.head_dim|fused: cache head stride taken as head_dim (HND wrong)"
  "$fused|num_axes) &&\\n        !Load(&fused.slot_bad[z])|num_axes)|fused: tokens with a bad slot written anyway"
  "$fused|return ScaledFp8E4m3(value, scale);|return FloatToFp8E4m3(value);|fused: fp8 scale ignored"
  "$fused|first_of_pair = (d & 1) == 0;|first_of_pair = (d & 1) == 1;|fused: GPT-J pair halves swapped"
  "$device|        p.direction);|        RotationDirection::kForward);|backward: the inverse direction ignored"
  "$fp8|rest == 0x80000u && (q & 1u) != 0|rest == 0x80000u|fp8: ties rounded away from zero"
  "$fused|(lane + i * lanes) * kC;\\n          if (first >= head_dim) continue;\\n          if (kPasses|(lane * kN + i) * kC;\\n          if (first >= head_dim) continue;\\n          if (kPasses|fused: q/k loads strided by kN chunks per lane (uncoalesced)"
  "$fused|LoadVec<T, kC>(in + lane * kC)|LoadVec<T, kC>(in + lane * kN * kC)|fused: q/k loads in flight strided by kN chunks per lane (uncoalesced)"
  "$device|CosSin{c2[i], s2[i]}|CosSin{c[i], s[i]}|XD: second halves rotated by the first halves' cos/sin"
  "$device|const bool second = kSplit && slot >= num_pairs;|const bool second = false;|XD: second halves' cos/sin staged at the first halves' axes"
  "$params|second ? (byte & 0xF) ^ (byte >> 4)|second ? byte >> 4|XD: second axis unpacked without the XOR"
  "$plan|kSharedPositions / num_axes|kSharedPositions / kNumAxes|planner: tokens per block ignore the axes (XD)"
  "$fused|kXdForms && !first_of_pair ? pair + num_pairs : pair|pair|fused XD: second halves take the first halves' cos/sin"
  "$fused|Store(&fused.partial[buffer][tid], rotated_partial);\\n        }\\n        __syncthreads();|Store(&fused.partial[buffer][tid], rotated_partial);\\n        }|fused: barrier before the norm of the rotated head"
  "$fused|Store(&fused.partial[buffer][tid], rotated_partial);|(void)rotated_partial;|fused: sums of the rotated head never exchanged"
  "$fused|y[i * kC + e] = Normalize(y[i * kC + e], rms_scale,|y[i * kC + e] = Normalize(y[i * kC + e], 1.0f,|fused: the rotated head not normalised"
)

suites=(//kernels/host_harness:mrope_kernel_host_test //kernels/host_harness:large_offsets_test
        //kernels/host_harness:mrope_kernel_host_tsan_test //tests/rotary:fp8_e4m3_test
        //kernels/host_harness:access_report_test)
survived=0
for i in "${!mutants[@]}"; do
  [ $# -gt 0 ] && [ "$1" != "$i" ] && continue
  IFS='|' read -r file original mutant what <<<"${mutants[$i]}"
  if ! python3 - "$file" "$original" "$mutant" <<'PY'
import sys
path, original, mutant = (a.replace("\\n", "\n") for a in sys.argv[1:])
text = open(path).read()
if text.count(original) != 1:
    sys.exit("mutation_check: %r found %d times in %s" % (original, text.count(original), path))
open(path, "w").write(text.replace(original, mutant))
PY
  then
    exit 2
  fi
  if bazel test --test_output=summary "${suites[@]}" >/tmp/mutation_check.log 2>&1; then
    echo "mutant $i SURVIVED: $what"
    survived=$((survived + 1))
  else
    caught=$(grep -oE '//kernels/host_harness:[a-z_]+ +(FAILED|NO STATUS)' /tmp/mutation_check.log |
             awk '{print $1}' | sed 's|//kernels/host_harness:||' | paste -sd, -)
    echo "mutant $i caught by ${caught:-the build}: $what"
  fi
  git checkout -q -- "$file"
done
exit $((survived > 0))
