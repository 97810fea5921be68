#include "kernels/fused_reference.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "kernels/fused_kernel_validate.h"
#include "mrope/common/status_macros.h"
#include "mrope/rotary/dtype_storage.h"
#include "mrope/rotary/fp8_e4m3.h"
#include "mrope/rotary/qk_norm_math.h"
#include "mrope/rotary/rope_math.h"

namespace mrope {
namespace {

float Load(const void* data, DType dtype, int64_t i) {
  return LoadAs(dtype, static_cast<const uint8_t*>(data) + i * ElementSize(dtype));
}

// Rounds once to `dtype`; fp8 stores value / scale as the kernel's quantisation does.
void Store(void* data, DType dtype, int64_t i, float value, float scale) {
  uint8_t* out = static_cast<uint8_t*>(data) + i * ElementSize(dtype);
  if (dtype == DType::kFloat8E4m3) {
    *out = ScaledFp8E4m3(value, scale);
  } else {
    StoreAs(dtype, value, out);
  }
}

int64_t HeadOffset(const HeadsView& v, int64_t token, int head) {
  return token * v.token_stride + int64_t{head} * v.head_stride;
}

int64_t CacheOffset(const PagedKvCache& cache, int64_t slot, int head) {
  return (slot / cache.block_size) * cache.block_stride +
         (slot % cache.block_size) * cache.slot_stride + int64_t{head} * cache.head_stride;
}

// The token's position on `axis`, or false (error bit set) when it has none in range.
bool TokenPosition(const FusedMropeArgs& args, int64_t position_limit, int64_t token, int axis,
                   int64_t* position) {
  if (args.positions.data != nullptr) {
    const int64_t i = axis * args.positions.axis_stride + token;
    *position = args.positions.is_int64 ? static_cast<const int64_t*>(args.positions.data)[i]
                                        : static_cast<const int32_t*>(args.positions.data)[i];
  } else {
    const SequenceDeltaPositions& seq = args.sequence_delta;
    const int64_t id = seq.seq_id != nullptr ? int64_t{seq.seq_id[token]} : token;
    if (id < 0 || id >= seq.num_seqs) {
      *args.error_flag |= kMropeErrorSequenceOutOfRange;
      return false;
    }
    *position = static_cast<int64_t>(static_cast<uint64_t>(seq.token_index[token]) +
                                     static_cast<uint64_t>(seq.delta[id]));
  }
  if (*position < 0 || *position >= position_limit) {
    *args.error_flag |= kMropeErrorPositionOutOfRange;
    return false;
  }
  return true;
}

// x * r * w_eff over a whole head, r from the sum of squares in the kernel's order: lane l
// sums chunks l, l + lanes, ... (elements in order), then the butterfly.
void RmsNormalize(const QkNormArgs& norm, DType dtype, std::vector<float>& x) {
  const int head_dim = static_cast<int>(x.size());
  const int chunk = NormChunkElements(ElementSize(dtype));
  const int lanes = NormLanes(head_dim, chunk);
  float partial[kMaxNormLanes] = {};
  for (int c = 0; c * chunk < head_dim; ++c) {
    for (int d = c * chunk; d < (c + 1) * chunk && d < head_dim; ++d) {
      partial[c % lanes] = AddRounded(partial[c % lanes], MulRounded(x[d], x[d]));
    }
  }
  const float rms_scale = RmsScale(ButterflySum(partial, lanes), head_dim, norm.eps);
  for (int d = 0; d < head_dim; ++d) {
    x[d] = Normalize(x[d], rms_scale,
                     NormWeight(norm.form, Load(norm.weight, norm.weight_dtype, d)));
  }
}

// The values of one head after its norm and rotation (dims < rotary_dim), in fp32: pair j's
// first element takes first[j], its second second[j] (the same but for split halves).
std::vector<float> NormRotateHead(const RotarySpec& spec, const HeadsView& view, int64_t token,
                                  int head, const QkNormArgs& norm,
                                  const std::vector<CosSin>& first,
                                  const std::vector<CosSin>& second) {
  std::vector<float> n(spec.head_dim);
  const int64_t base = HeadOffset(view, token, head);
  for (int d = 0; d < spec.head_dim; ++d) n[d] = Load(view.data, view.dtype, base + d);
  if (NormBeforeRotary(norm.form)) RmsNormalize(norm, view.dtype, n);
  std::vector<float> y = n;
  for (int j = 0; j < spec.rotary_dim / 2; ++j) {
    const int i1 = PairFirstIndex(spec.layout, j);
    const int i2 = PairSecondIndex(spec.layout, j, spec.rotary_dim);
    y[i1] = RotatedFirst(n[i1], n[i2], first[j]);
    y[i2] = RotatedSecond(n[i1], n[i2], second[j]);
  }
  if (norm.form == QkNormForm::kWeightAfterRotary) RmsNormalize(norm, view.dtype, y);
  return y;
}

}  // namespace

absl::Status ApplyFusedReference(const RotarySpec& spec, const FusedMropeArgs& args) {
  MROPE_RETURN_IF_ERROR(ValidateFusedMropeArgs(spec, args));
  const bool table = args.table.cos != nullptr;
  const int64_t position_limit = table ? args.table.max_position : kMaxPosition;
  const int num_pairs = spec.rotary_dim / 2;
  const HeadsView& q_out = args.q_out.data != nullptr ? args.q_out : args.q;
  const float q_scale = q_out.dtype == DType::kFloat8E4m3 ? *args.q_scale : 1.0f;
  const PagedKvCache& cache = args.cache;
  const bool cache_fp8 = cache.dtype == DType::kFloat8E4m3;
  const int64_t num_slots = cache.num_blocks * cache.block_size;
  const AxisMap& map = spec.axis_map;
  const int num_axes = AxisCount(map);
  std::vector<CosSin> first(num_pairs);
  std::vector<CosSin> second(num_pairs);

  for (int64_t t = 0; t < args.q.num_tokens; ++t) {
    int64_t position[kMaxAxes];
    bool valid = true;
    for (int axis = 0; axis < num_axes; ++axis) {
      valid = TokenPosition(args, position_limit, t, axis, &position[axis]) && valid;
    }
    int64_t slot = -1;
    if (args.slot_mapping != nullptr) {
      slot = args.slot_mapping[t];
      if (slot < -1 || slot >= num_slots) {
        *args.error_flag |= kMropeErrorSlotOutOfRange;
        valid = false;
      }
    }
    if (!valid) continue;
    const auto cos_sin = [&](int j, int axis) {
      const int64_t p = position[axis];
      return ForDirection(table ? CosSin{args.table.cos[p * args.table.row_stride + j],
                                         args.table.sin[p * args.table.row_stride + j]}
                                : PairCosSin(spec.inv_freq[j], static_cast<float>(p),
                                             spec.attention_scaling, spec.sincos_math),
                          args.direction);
    };
    for (int j = 0; j < num_pairs; ++j) {
      first[j] = cos_sin(j, map.axis[j]);
      second[j] = map.split_halves ? cos_sin(j, map.second_axis[j]) : first[j];
    }
    for (int h = 0; h < args.q.num_heads; ++h) {
      const std::vector<float> y = NormRotateHead(spec, args.q, t, h, args.q_norm, first, second);
      const int64_t base = HeadOffset(q_out, t, h);
      for (int d = 0; d < spec.head_dim; ++d) Store(q_out.data, q_out.dtype, base + d, y[d], q_scale);
    }
    for (int h = 0; h < args.k.num_heads; ++h) {
      const std::vector<float> y = NormRotateHead(spec, args.k, t, h, args.k_norm, first, second);
      if (slot >= 0) {
        const int64_t cache_base = CacheOffset(cache, slot, h);
        const int scale_index = cache.per_head_scale ? h : 0;
        const float k_scale = cache_fp8 ? cache.k_scale[scale_index] : 1.0f;
        const float v_scale = cache_fp8 ? cache.v_scale[scale_index] : 1.0f;
        const int64_t v_base = HeadOffset(args.v, t, h);
        for (int d = 0; d < spec.head_dim; ++d) {
          Store(cache.k, cache.dtype, cache_base + d, y[d], k_scale);
          Store(cache.v, cache.dtype, cache_base + d, Load(args.v.data, args.v.dtype, v_base + d),
                v_scale);
        }
      }
      if (args.k_out.data != nullptr) {
        const int64_t base = HeadOffset(args.k_out, t, h);
        for (int d = 0; d < spec.head_dim; ++d) {
          Store(args.k_out.data, args.k_out.dtype, base + d, y[d], 1.0f);
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace mrope
