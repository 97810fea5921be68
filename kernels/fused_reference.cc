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

// Normalised (and, for dims < rotary_dim, rotated) values of one head, in fp32.
std::vector<float> NormRotateHead(const RotarySpec& spec, const HeadsView& view, int64_t token,
                                  int head, const QkNormArgs& norm,
                                  const std::vector<CosSin>& cos_sin) {
  const int d_total = spec.head_dim;
  std::vector<float> n(d_total);
  const int64_t base = HeadOffset(view, token, head);
  for (int d = 0; d < d_total; ++d) n[d] = Load(view.data, view.dtype, base + d);
  if (norm.form != QkNormForm::kNone) {
    // The kernel's order: lane l sums chunks l, l + lanes, ... (elements in order), then the
    // butterfly.
    const int chunk = NormChunkElements(ElementSize(view.dtype));
    const int lanes = NormLanes(d_total, chunk);
    float partial[kMaxNormLanes] = {};
    for (int c = 0; c * chunk < d_total; ++c) {
      for (int d = c * chunk; d < (c + 1) * chunk && d < d_total; ++d) {
        partial[c % lanes] = AddRounded(partial[c % lanes], MulRounded(n[d], n[d]));
      }
    }
    const float rms_scale = RmsScale(ButterflySum(partial, lanes), d_total, norm.eps);
    for (int d = 0; d < d_total; ++d) {
      n[d] = Normalize(n[d], rms_scale,
                       NormWeight(norm.form, Load(norm.weight, norm.weight_dtype, d)));
    }
  }
  std::vector<float> y = n;
  for (int j = 0; j < spec.rotary_dim / 2; ++j) {
    const int i1 = PairFirstIndex(spec.layout, j);
    const int i2 = PairSecondIndex(spec.layout, j, spec.rotary_dim);
    const RotatedPair r = RotatePair(n[i1], n[i2], cos_sin[j]);
    y[i1] = r.first;
    y[i2] = r.second;
  }
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
  std::vector<CosSin> cos_sin(num_pairs);

  for (int64_t t = 0; t < args.q.num_tokens; ++t) {
    int64_t position[kNumAxes];
    bool valid = true;
    for (int axis = 0; axis < kNumAxes; ++axis) {
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
    for (int j = 0; j < num_pairs; ++j) {
      const int64_t p = position[spec.axis_map.axis[j]];
      cos_sin[j] = ForDirection(table ? CosSin{args.table.cos[p * args.table.row_stride + j],
                                               args.table.sin[p * args.table.row_stride + j]}
                                      : PairCosSin(spec.inv_freq[j], static_cast<float>(p),
                                                   spec.attention_scaling, spec.sincos_math),
                                args.direction);
    }
    for (int h = 0; h < args.q.num_heads; ++h) {
      const std::vector<float> y = NormRotateHead(spec, args.q, t, h, args.q_norm, cos_sin);
      const int64_t base = HeadOffset(q_out, t, h);
      for (int d = 0; d < spec.head_dim; ++d) Store(q_out.data, q_out.dtype, base + d, y[d], q_scale);
    }
    for (int h = 0; h < args.k.num_heads; ++h) {
      const std::vector<float> y = NormRotateHead(spec, args.k, t, h, args.k_norm, cos_sin);
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
