// The C ABI's kernel launches (mrope/mrope_c.h): the C structs converted field by field to
// MropeKernelArgs / FusedMropeArgs, then LaunchMropeKernel / LaunchFusedMropeKernel, which
// validate them. Enum values are checked here, so no out-of-range value reaches a C++ enum.

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "capi/internal/abi_util.h"
#include "capi/internal/handles.h"
#include "kernels/fused_kernel.h"
#include "kernels/mrope_kernel.h"
#include "mrope/common/status_macros.h"
#include "mrope/mrope_c.h"
#include "mrope/rotary/qk_norm_math.h"
#include "mrope/rotary/rope_math.h"
#include "mrope/rotary/tensor_view.h"

namespace mrope {
namespace capi {
namespace {

static_assert(MROPE_ERROR_POSITION_OUT_OF_RANGE == kMropeErrorPositionOutOfRange);
static_assert(MROPE_ERROR_SEQUENCE_OUT_OF_RANGE == kMropeErrorSequenceOutOfRange);
static_assert(MROPE_ERROR_SLOT_OUT_OF_RANGE == kMropeErrorSlotOutOfRange);
static_assert(MROPE_FLOAT32 == static_cast<int>(DType::kFloat32) &&
              MROPE_BFLOAT16 == static_cast<int>(DType::kBFloat16) &&
              MROPE_FLOAT16 == static_cast<int>(DType::kFloat16) &&
              MROPE_FLOAT8_E4M3 == static_cast<int>(DType::kFloat8E4m3));
static_assert(MROPE_QK_NORM_NONE == static_cast<int>(QkNormForm::kNone) &&
              MROPE_QK_NORM_WEIGHT == static_cast<int>(QkNormForm::kWeight) &&
              MROPE_QK_NORM_ONE_PLUS_WEIGHT == static_cast<int>(QkNormForm::kOnePlusWeight) &&
              MROPE_QK_NORM_WEIGHT_AFTER_ROTARY ==
                  static_cast<int>(QkNormForm::kWeightAfterRotary));

static_assert(MROPE_FORWARD == static_cast<int>(RotationDirection::kForward) &&
              MROPE_INVERSE == static_cast<int>(RotationDirection::kInverse));

// The structs' first versions ended before `direction`.
constexpr size_t kKernelArgsV1 = offsetof(mrope_kernel_args, direction);
constexpr size_t kFusedArgsV1 = offsetof(mrope_fused_args, direction);

absl::StatusOr<DType> ToDType(int32_t value, const char* name) {
  if (value < MROPE_FLOAT32 || value > MROPE_FLOAT8_E4M3) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " is ", value, ", expected 0 (fp32), 1 (bf16), 2 (fp16) or 3 (fp8 e4m3)"));
  }
  return static_cast<DType>(value);
}

absl::StatusOr<RotationDirection> ToDirection(int32_t value) {
  if (value != MROPE_FORWARD && value != MROPE_INVERSE) {
    return absl::InvalidArgumentError(
        absl::StrCat("args->direction is ", value, ", expected 0 (forward) or 1 (inverse)"));
  }
  return static_cast<RotationDirection>(value);
}

absl::StatusOr<HeadsView> ToHeads(const mrope_heads_view& in, const char* name) {
  HeadsView view;
  MROPE_ASSIGN_OR_RETURN(view.dtype, ToDType(in.dtype, name));
  view.data = in.data;
  view.num_tokens = in.num_tokens;
  view.num_heads = in.num_heads;
  view.head_dim = in.head_dim;
  view.token_stride = in.token_stride;
  view.head_stride = in.head_stride;
  return view;
}

PositionsView ToPositions(const mrope_positions_view& in) {
  PositionsView view;
  view.data = in.data;
  view.is_int64 = in.is_int64 != 0;
  view.num_tokens = in.num_tokens;
  view.axis_stride = in.axis_stride;
  return view;
}

SequenceDeltaPositions ToSequenceDelta(const mrope_sequence_delta& in) {
  SequenceDeltaPositions out;
  out.token_index = in.token_index;
  out.seq_id = in.seq_id;
  out.delta = in.delta;
  out.num_tokens = in.num_tokens;
  out.num_seqs = in.num_seqs;
  return out;
}

DeviceCosSinTable ToTable(const mrope_cos_sin_table& in) {
  DeviceCosSinTable table;
  table.cos = in.cos;
  table.sin = in.sin;
  table.max_position = in.max_position;
  table.row_stride = in.row_stride;
  return table;
}

absl::StatusOr<QkNormArgs> ToQkNorm(const mrope_qk_norm& in, const char* name) {
  if (in.form < MROPE_QK_NORM_NONE || in.form > MROPE_QK_NORM_WEIGHT_AFTER_ROTARY) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ".form is ", in.form,
                     ", expected 0 (none), 1 (weight), 2 (one plus weight) or 3 (weight after "
                     "rotary)"));
  }
  QkNormArgs out;
  out.form = static_cast<QkNormForm>(in.form);
  MROPE_ASSIGN_OR_RETURN(out.weight_dtype,
                         ToDType(in.weight_dtype, absl::StrCat(name, ".weight_dtype").c_str()));
  out.weight = in.weight;
  out.eps = in.eps;
  return out;
}

absl::StatusOr<PagedKvCache> ToCache(const mrope_paged_kv_cache& in) {
  PagedKvCache cache;
  MROPE_ASSIGN_OR_RETURN(cache.dtype, ToDType(in.dtype, "args->cache.dtype"));
  cache.k = in.k;
  cache.v = in.v;
  cache.num_blocks = in.num_blocks;
  cache.block_size = in.block_size;
  cache.num_heads = in.num_heads;
  cache.head_dim = in.head_dim;
  cache.block_stride = in.block_stride;
  cache.slot_stride = in.slot_stride;
  cache.head_stride = in.head_stride;
  cache.k_scale = in.k_scale;
  cache.v_scale = in.v_scale;
  cache.per_head_scale = in.per_head_scale != 0;
  return cache;
}

absl::Status LaunchKernel(const mrope_rotary* rotary, const mrope_kernel_args* args_in,
                          mrope_stream stream) {
  if (rotary == nullptr) return NullArgument("rotary");
  MROPE_ASSIGN_OR_RETURN(const mrope_kernel_args in, ReadVersioned(args_in, "args", kKernelArgsV1));
  MropeKernelArgs args;
  MROPE_ASSIGN_OR_RETURN(args.q, ToHeads(in.q, "args->q.dtype"));
  MROPE_ASSIGN_OR_RETURN(args.k, ToHeads(in.k, "args->k.dtype"));
  args.positions = ToPositions(in.positions);
  args.sequence_delta = ToSequenceDelta(in.sequence_delta);
  args.table = ToTable(in.table);
  args.error_flag = in.error_flag;
  MROPE_ASSIGN_OR_RETURN(args.direction, ToDirection(in.direction));
  return LaunchMropeKernel(rotary->spec, args, stream);
}

absl::Status LaunchFused(const mrope_rotary* rotary, const mrope_fused_args* args_in,
                         mrope_stream stream) {
  if (rotary == nullptr) return NullArgument("rotary");
  MROPE_ASSIGN_OR_RETURN(const mrope_fused_args in, ReadVersioned(args_in, "args", kFusedArgsV1));
  FusedMropeArgs args;
  MROPE_ASSIGN_OR_RETURN(args.q, ToHeads(in.q, "args->q.dtype"));
  MROPE_ASSIGN_OR_RETURN(args.k, ToHeads(in.k, "args->k.dtype"));
  MROPE_ASSIGN_OR_RETURN(args.v, ToHeads(in.v, "args->v.dtype"));
  MROPE_ASSIGN_OR_RETURN(args.q_out, ToHeads(in.q_out, "args->q_out.dtype"));
  args.q_scale = in.q_scale;
  MROPE_ASSIGN_OR_RETURN(args.k_out, ToHeads(in.k_out, "args->k_out.dtype"));
  MROPE_ASSIGN_OR_RETURN(args.q_norm, ToQkNorm(in.q_norm, "args->q_norm"));
  MROPE_ASSIGN_OR_RETURN(args.k_norm, ToQkNorm(in.k_norm, "args->k_norm"));
  args.positions = ToPositions(in.positions);
  args.sequence_delta = ToSequenceDelta(in.sequence_delta);
  args.table = ToTable(in.table);
  args.slot_mapping = in.slot_mapping;
  MROPE_ASSIGN_OR_RETURN(args.cache, ToCache(in.cache));
  args.error_flag = in.error_flag;
  MROPE_ASSIGN_OR_RETURN(args.direction, ToDirection(in.direction));
  return LaunchFusedMropeKernel(rotary->spec, args, stream);
}

}  // namespace
}  // namespace capi
}  // namespace mrope

extern "C" {

int mrope_launch_kernel(const mrope_rotary* rotary, const mrope_kernel_args* args,
                        mrope_stream stream, char* message, size_t message_size) {
  return mrope::capi::Guarded(message, message_size,
                              [&] { return mrope::capi::LaunchKernel(rotary, args, stream); });
}

int mrope_launch_fused_kernel(const mrope_rotary* rotary, const mrope_fused_args* args,
                              mrope_stream stream, char* message, size_t message_size) {
  return mrope::capi::Guarded(message, message_size,
                              [&] { return mrope::capi::LaunchFused(rotary, args, stream); });
}

}  // extern "C"
