#ifndef MROPE_KERNELS_KERNEL_PARAMS_H_
#define MROPE_KERNELS_KERNEL_PARAMS_H_

// Internal to kernels/: what the host side (launch_plan.cc) hands the CUDA side
// (mrope_kernel.cu). Plain C++ without Abseil, so nvcc and the host compiler see one
// definition.

#include <cstdint>

#include "kernels/mrope_kernel_args.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace kernel_internal {

// Block shape limits shared by the planner and the kernel.
inline constexpr int kMaxBlockThreads = 256;
inline constexpr int kMaxTokensPerBlock = 16;
// Heads (passes) whose loads a thread issues before the block's barriers, when one block covers
// every head of its tokens (T >= kSplitHeadsBelowTokens): the bytes in flight that hide HBM
// latency come from these. The planner then gives a block at least this many passes when there
// are that many heads. Small batches run one pass per block, with one load in flight. The fused
// kernel keeps as many passes in flight too (FusedPassesInFlight), in every launch.
inline constexpr int kPassesInFlight = 4;
// cos/sin slots in shared memory: tokens_per_block * (rotary_dim / 2) <= kSharedPairs, or
// tokens_per_block * rotary_dim with split halves (XD-RoPE: a cos/sin per element).
inline constexpr int kSharedPairs = 512;
// (token, axis) position slots in shared memory: tokens_per_block * num_axes <= this, which
// three axes fill at kMaxTokensPerBlock; more axes (XD-RoPE) take fewer tokens per block.
inline constexpr int kSharedPositions = kMaxTokensPerBlock * kNumAxes;

enum class PositionSource : uint8_t {
  kPlanarInt32 = 0,
  kPlanarInt64 = 1,
  kSequenceDelta = 2,
};

// Axes packed four pairs to a word: pair 4w + i in bits [8i, 8i + 8) of word w, the axis of
// its first element in the low four bits and, in the high four, that axis XOR the axis of its
// second element: zero unless the halves are split (XD-RoPE), so a byte is the pair's one axis
// for every other layout. The planner packs (into zeroed words), the kernels unpack.
static_assert(kMaxAxes <= 16, "an axis takes four bits");
MROPE_HOST_DEVICE inline void PackPairAxis(uint32_t* words, int pair, int first_axis,
                                           int second_axis) {
  const uint32_t byte = static_cast<uint32_t>(first_axis | (first_axis ^ second_axis) << 4);
  words[pair / 4] |= byte << (8 * (pair % 4));
}
// The axis of the pair's first element, or (second) of its second; kSplit: the kernels that
// take split halves (the others read the whole byte, as before there were any).
template <bool kSplit>
MROPE_HOST_DEVICE inline int UnpackPairAxis(const uint32_t* words, int pair, bool second) {
  const int byte = static_cast<int>((words[pair / 4] >> (8 * (pair % 4))) & 0xFF);
  if constexpr (!kSplit) return byte;
  return second ? (byte & 0xF) ^ (byte >> 4) : byte & 0xF;
}

// Where a launch's positions and cos/sin come from, and the per-pair rotary parameters: the
// part of the by-value kernel arguments that the M-RoPE kernel and the fused kernel share.
struct RotaryParams {
  PositionSource position_source = PositionSource::kPlanarInt64;
  // Axes read (AxisCount of the axis map): kNumAxes, or up to kMaxAxes for XD-RoPE.
  uint8_t num_axes = kNumAxes;
  // XD-RoPE: a pair's two elements take the cos/sin of their own axes (pair_axes' high bits).
  bool split_halves = false;
  const void* positions = nullptr;  // planar [num_axes][T]: (axis, t) at axis * axis_stride + t
  int64_t axis_stride = 0;
  const int64_t* token_index = nullptr;  // kSequenceDelta
  const int32_t* seq_id = nullptr;       // kSequenceDelta; nullptr: token i is sequence i
  const int64_t* seq_delta = nullptr;    // kSequenceDelta
  int64_t num_seqs = 0;

  const float* cos_table = nullptr;  // nullptr: cos/sin from inv_freq
  const float* sin_table = nullptr;
  int64_t table_row_stride = 0;
  // Valid positions are [0, position_limit): table rows, or kMaxPosition without a table.
  int64_t position_limit = 0;

  float attention_scaling = 1.0f;
  SinCosMath sincos_math = SinCosMath::kDouble;
  RotationDirection direction = RotationDirection::kForward;
  alignas(16) float inv_freq[kMaxRotaryPairs] = {};  // read 4 at a time
  // AxisMap::axis (and second_axis) packed four pairs to a word (PackPairAxis), so that the
  // kernel copies them a word at a time.
  alignas(16) uint32_t pair_axes[kMaxRotaryPairs / 4] = {};
  int* error_flag = nullptr;
};

// The kernel's single by-value argument (__grid_constant__), so a launch needs no device
// allocation and a captured graph holds its own copy.
struct KernelParams {
  void* q = nullptr;  // element (t, h, d) at q + t * q_token_stride + h * q_head_stride + d
  void* k = nullptr;
  int64_t q_token_stride = 0;
  int64_t q_head_stride = 0;
  int64_t k_token_stride = 0;
  int64_t k_head_stride = 0;
  int64_t num_tokens = 0;
  int32_t num_q_heads = 0;
  int32_t num_k_heads = 0;
  int32_t rotary_dim = 0;
  int32_t heads_per_chunk = 0;  // q+k heads handled by one block; blockIdx.y picks the chunk
  RotaryParams rotary;
};

// Kernel parameters are limited to 4 KiB on every CUDA version mrope supports.
static_assert(sizeof(KernelParams) <= 4096, "KernelParams exceeds the kernel parameter limit");

// Everything needed to pick and launch one kernel instantiation.
struct LaunchPlan {
  KernelParams params;
  DType dtype = DType::kFloat32;
  RotaryLayout layout = RotaryLayout::kNeox;
  // 16-byte accesses (16 / element size elements); otherwise one element per access.
  bool vectorized = false;
  // 64, 128 or 256 when a kernel specialised for that rotary_dim is used (vector path only);
  // 0 for the generic kernel (always with split halves).
  int specialized_rotary_dim = 0;
  // Heads whose loads a thread issues before the barriers: 1, or kPassesInFlight for the vector
  // path when one block covers every head of its tokens.
  int passes_in_flight = 1;
  // block = (units per head, heads per pass, tokens per block); grid = (token groups, chunks).
  uint32_t block_x = 1;
  uint32_t block_y = 1;
  uint32_t block_z = 1;
  uint32_t grid_x = 0;  // 0: nothing to launch (num_tokens == 0)
  uint32_t grid_y = 1;
};

// Result of EnqueueMropeKernel: cuda_error is a cudaError_t value (0 = cudaSuccess) and
// message its cudaGetErrorString text (nullptr on success).
struct EnqueueResult {
  int cuda_error = 0;
  const char* message = nullptr;
};

// Launches the kernel `plan` describes on `stream` (mrope_kernel.cu). Requires
// plan.grid_x > 0.
EnqueueResult EnqueueMropeKernel(const LaunchPlan& plan, GpuStream stream);

}  // namespace kernel_internal
}  // namespace mrope

#endif  // MROPE_KERNELS_KERNEL_PARAMS_H_
