#ifndef MROPE_KERNELS_MROPE_DEVICE_CUH_
#define MROPE_KERNELS_MROPE_DEVICE_CUH_

// Device building blocks of the M-RoPE kernel (mrope_kernel.cu): storage conversion, vector
// access, position and cos/sin lookup, and the rotation of one thread's unit of work. All the
// numbers come from mrope/rotary/rope_math.h.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/kernel_params.h"
#include "kernels/mrope_kernel_args.h"
#include "mrope/rotary/rope_math.h"

namespace mrope {
namespace kernel_internal {

// Every global and shared memory access of the kernels goes through Load and Store, directly
// or through the helpers below that take a site: a plain access on the GPU. The host execution
// harness (kernels/host_harness/cuda_host_prelude.h) defines MROPE_ACCESS_SITE as the caller's
// file and line, which a helper passes on (MROPE_PASS_SITE) to the access it makes for its
// caller, and records each access for its access model when that is on (access_model.h).
#ifndef MROPE_ACCESS_SITE
#define MROPE_ACCESS_SITE
#define MROPE_PASS_SITE
#define MROPE_RECORD_ACCESS(address, bytes, is_store)
#endif

template <typename T>
struct NoDeduce {
  using Type = T;
};

template <typename T>
__device__ __forceinline__ T Load(const T* p MROPE_ACCESS_SITE) {
  MROPE_RECORD_ACCESS(p, sizeof(T), false);
  return *p;
}

template <typename T>
__device__ __forceinline__ void Store(T* p, typename NoDeduce<T>::Type value MROPE_ACCESS_SITE) {
  MROPE_RECORD_ACCESS(p, sizeof(T), true);
  *p = value;
}

// Storage element traits: raw bits in registers, exact widening to fp32 and narrowing with
// round-to-nearest-even (as the reference rounds).
template <typename T>
struct Element;
template <>
struct Element<float> {
  using Bits = uint32_t;
  static __device__ __forceinline__ float ToFloat(Bits b) { return __uint_as_float(b); }
  static __device__ __forceinline__ Bits FromFloat(float x) { return __float_as_uint(x); }
};
template <>
struct Element<__nv_bfloat16> {
  using Bits = uint16_t;
  static __device__ __forceinline__ float ToFloat(Bits b) {
    return __bfloat162float(__ushort_as_bfloat16(b));
  }
  static __device__ __forceinline__ Bits FromFloat(float x) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  }
};
template <>
struct Element<__half> {
  using Bits = uint16_t;
  static __device__ __forceinline__ float ToFloat(Bits b) {
    return __half2float(__ushort_as_half(b));
  }
  static __device__ __forceinline__ Bits FromFloat(float x) {
    return __half_as_ushort(__float2half_rn(x));
  }
};

// kVec consecutive elements in registers: a whole 16-byte access (vector path) or a single
// element (scalar path). The vector path keeps the four 32-bit words of its 128-bit load and
// unpacks an element only where it is rotated, so a thread can hold the loads of several heads
// in flight in 8 registers per unit (one register per 16-bit element would double that).
template <typename T, int kVec>
struct Vec {
  static_assert(kVec == 1 || sizeof(T) * kVec == 16, "an access is one element or 16 bytes");
  using Bits = typename Element<T>::Bits;
  static constexpr int kWords = kVec == 1 ? 1 : 4;
  static constexpr int kPerWord = kVec == 1 ? 1 : 4 / sizeof(T);

  __device__ __forceinline__ Bits Get(int i) const {
    if constexpr (kPerWord == 1) return static_cast<Bits>(w[i]);
    return static_cast<Bits>(w[i / kPerWord] >> (16 * (i % kPerWord)));
  }
  __device__ __forceinline__ void Set(int i, Bits bits) {
    if constexpr (kPerWord == 1) {
      w[i] = bits;
    } else {
      const int shift = 16 * (i % kPerWord);
      w[i / kPerWord] = (w[i / kPerWord] & ~(0xFFFFu << shift)) | (uint32_t{bits} << shift);
    }
  }

  uint32_t w[kWords];
};

template <typename T, int kVec>
__device__ __forceinline__ Vec<T, kVec> LoadVec(const T* p MROPE_ACCESS_SITE) {
  Vec<T, kVec> v;
  if constexpr (kVec == 1) {
    v.w[0] = Load(reinterpret_cast<const typename Element<T>::Bits*>(p) MROPE_PASS_SITE);
  } else {
    const uint4 w = Load(reinterpret_cast<const uint4*>(p) MROPE_PASS_SITE);
    v.w[0] = w.x;
    v.w[1] = w.y;
    v.w[2] = w.z;
    v.w[3] = w.w;
  }
  return v;
}

template <typename T, int kVec>
__device__ __forceinline__ void StoreVec(T* p, const Vec<T, kVec>& v MROPE_ACCESS_SITE) {
  if constexpr (kVec == 1) {
    Store(reinterpret_cast<typename Element<T>::Bits*>(p), v.Get(0) MROPE_PASS_SITE);
  } else {
    // __stwb: an ordinary write-back store, spelled so that it stays one 128-bit st.global.
    MROPE_RECORD_ACCESS(p, sizeof(uint4), true);
    __stwb(reinterpret_cast<uint4*>(p), make_uint4(v.w[0], v.w[1], v.w[2], v.w[3]));
  }
}

// One thread's unit of work in one head: two kVec-element accesses that hold kVec whole pairs.
//  - Vector path (kVec > 1): elements [u*kVec, u*kVec + kVec) and the same range shifted by
//    num_pairs (the second half of the rotary dims). NeoX pairs first[i] with second[i]
//    (pairs u*kVec + i); GPT-J pairs adjacent elements inside each access (pairs
//    u*kVec/2 + i and num_pairs/2 + u*kVec/2 + i).
//  - Scalar path (kVec == 1): unit u is pair u at PairFirstIndex / PairSecondIndex.
// Either way the thread owns both elements of each of its pairs.
template <typename T, int kVec>
struct Unit {
  Vec<T, kVec> first;
  Vec<T, kVec> second;
};

template <RotaryLayout kLayout, int kVec>
__device__ __forceinline__ int FirstOffset(int unit) {
  return kVec == 1 ? PairFirstIndex(kLayout, unit) : unit * kVec;
}

template <RotaryLayout kLayout, int kVec>
__device__ __forceinline__ int SecondOffset(int unit, int num_pairs) {
  return kVec == 1 ? PairSecondIndex(kLayout, unit, 2 * num_pairs) : unit * kVec + num_pairs;
}

template <RotaryLayout kLayout, typename T, int kVec>
__device__ __forceinline__ Unit<T, kVec> LoadUnit(const T* head, int unit, int num_pairs) {
  return {LoadVec<T, kVec>(head + FirstOffset<kLayout, kVec>(unit)),
          LoadVec<T, kVec>(head + SecondOffset<kLayout, kVec>(unit, num_pairs))};
}

template <RotaryLayout kLayout, typename T, int kVec>
__device__ __forceinline__ void StoreUnit(T* head, int unit, int num_pairs,
                                          const Unit<T, kVec>& x) {
  StoreVec<T, kVec>(head + FirstOffset<kLayout, kVec>(unit), x.first);
  StoreVec<T, kVec>(head + SecondOffset<kLayout, kVec>(unit, num_pairs), x.second);
}

// kN consecutive floats from shared memory, as wide as their alignment allows (the planner
// only picks the vector path when these offsets are multiples of the access width).
template <int kN>
__device__ __forceinline__ void LoadShared(const float* s, float (&out)[kN] MROPE_ACCESS_SITE) {
  if constexpr (kN % 4 == 0) {
#pragma unroll
    for (int i = 0; i < kN; i += 4) {
      const float4 f = Load(reinterpret_cast<const float4*>(s + i) MROPE_PASS_SITE);
      out[i] = f.x;
      out[i + 1] = f.y;
      out[i + 2] = f.z;
      out[i + 3] = f.w;
    }
  } else if constexpr (kN % 2 == 0) {
#pragma unroll
    for (int i = 0; i < kN; i += 2) {
      const float2 f = Load(reinterpret_cast<const float2*>(s + i) MROPE_PASS_SITE);
      out[i] = f.x;
      out[i + 1] = f.y;
    }
  } else {
#pragma unroll
    for (int i = 0; i < kN; ++i) out[i] = Load(s + i MROPE_PASS_SITE);
  }
}

// kN consecutive floats to shared memory, 16 bytes at a time (s 16-byte aligned, kN % 4 == 0).
template <int kN>
__device__ __forceinline__ void StoreShared(float* s, const float* in MROPE_ACCESS_SITE) {
  static_assert(kN % 4 == 0, "whole float4s");
#pragma unroll
  for (int i = 0; i < kN; i += 4) {
    Store(reinterpret_cast<float4*>(s + i), make_float4(in[i], in[i + 1], in[i + 2], in[i + 3])
          MROPE_PASS_SITE);
  }
}

// Rotates the pair (element i of a, element j of b).
template <typename T, int kVec>
__device__ __forceinline__ void RotateElements(Vec<T, kVec>& a, int i, Vec<T, kVec>& b, int j,
                                               float cos, float sin) {
  const RotatedPair r = RotatePair(Element<T>::ToFloat(a.Get(i)), Element<T>::ToFloat(b.Get(j)),
                                   CosSin{cos, sin});
  a.Set(i, Element<T>::FromFloat(r.first));
  b.Set(j, Element<T>::FromFloat(r.second));
}

// Rotates the pair (element i of a, element j of b) whose halves take their own cos/sin
// (XD-RoPE's split halves).
template <typename T, int kVec>
__device__ __forceinline__ void RotateSplitElements(Vec<T, kVec>& a, int i, Vec<T, kVec>& b,
                                                    int j, CosSin first, CosSin second) {
  const float x1 = Element<T>::ToFloat(a.Get(i));
  const float x2 = Element<T>::ToFloat(b.Get(j));
  a.Set(i, Element<T>::FromFloat(RotatedFirst(x1, x2, first)));
  b.Set(j, Element<T>::FromFloat(RotatedSecond(x1, x2, second)));
}

// Rotates unit `unit` in registers; cos/sin point at this token's num_pairs values (kSplit:
// its rotary_dim values, those of the pairs' first elements, then of their second elements;
// NeoX only).
template <RotaryLayout kLayout, bool kSplit, typename T, int kVec>
__device__ __forceinline__ void RotateUnit(Unit<T, kVec>& x, int unit, int num_pairs,
                                           const float* cos, const float* sin) {
  if constexpr (kSplit) {
    static_assert(kLayout == RotaryLayout::kNeox, "split halves are NeoX halves");
    // Four elements at a time: the four cos/sin arrays of a whole 16-bit access would hold 32
    // registers and spill.
    constexpr int kGroup = kVec < 4 ? kVec : 4;
#pragma unroll
    for (int g = 0; g < kVec; g += kGroup) {
      float c[kGroup];
      float s[kGroup];
      float c2[kGroup];
      float s2[kGroup];
      LoadShared(cos + unit * kVec + g, c);
      LoadShared(sin + unit * kVec + g, s);
      LoadShared(cos + num_pairs + unit * kVec + g, c2);
      LoadShared(sin + num_pairs + unit * kVec + g, s2);
#pragma unroll
      for (int i = 0; i < kGroup; ++i) {
        RotateSplitElements(x.first, g + i, x.second, g + i, CosSin{c[i], s[i]},
                            CosSin{c2[i], s2[i]});
      }
    }
  } else if constexpr (kVec == 1 || kLayout == RotaryLayout::kNeox) {
    float c[kVec];
    float s[kVec];
    LoadShared(cos + unit * kVec, c);
    LoadShared(sin + unit * kVec, s);
#pragma unroll
    for (int i = 0; i < kVec; ++i) RotateElements(x.first, i, x.second, i, c[i], s[i]);
  } else {
    constexpr int kPairs = kVec / 2;  // per access
    float c[kPairs];
    float s[kPairs];
    LoadShared(cos + unit * kPairs, c);
    LoadShared(sin + unit * kPairs, s);
#pragma unroll
    for (int i = 0; i < kPairs; ++i) {
      RotateElements(x.first, 2 * i, x.first, 2 * i + 1, c[i], s[i]);
    }
    LoadShared(cos + num_pairs / 2 + unit * kPairs, c);
    LoadShared(sin + num_pairs / 2 + unit * kPairs, s);
#pragma unroll
    for (int i = 0; i < kPairs; ++i) {
      RotateElements(x.second, 2 * i, x.second, 2 * i + 1, c[i], s[i]);
    }
  }
}

// Start of (token, head) where head counts q heads first, then k heads.
template <typename T>
__device__ __forceinline__ T* HeadPointer(const KernelParams& p, int64_t token, int head) {
  if (head < p.num_q_heads) {
    return static_cast<T*>(p.q) + token * p.q_token_stride + int64_t{head} * p.q_head_stride;
  }
  return static_cast<T*>(p.k) + token * p.k_token_stride +
         int64_t{head - p.num_q_heads} * p.k_head_stride;
}

// Position of `token` (< num_tokens) on `axis`, as stored or (sequence delta) computed, not yet
// range-checked (PositionInRange). Returns false, after setting the error bit, when the
// sequence id is out of range.
__device__ __forceinline__ bool LoadPosition(const RotaryParams& p, int64_t token, int axis,
                                             int64_t* position) {
  switch (p.position_source) {
    case PositionSource::kPlanarInt32:
      *position = Load(static_cast<const int32_t*>(p.positions) + axis * p.axis_stride + token);
      return true;
    case PositionSource::kPlanarInt64:
      *position = Load(static_cast<const int64_t*>(p.positions) + axis * p.axis_stride + token);
      return true;
    case PositionSource::kSequenceDelta: {
      const int64_t seq = p.seq_id != nullptr ? int64_t{Load(p.seq_id + token)} : token;
      if (seq < 0 || seq >= p.num_seqs) {
        atomicOr(p.error_flag, kMropeErrorSequenceOutOfRange);
        return false;
      }
      // Wrapping add (no signed overflow); an absurd sum fails PositionInRange.
      *position = static_cast<int64_t>(static_cast<uint64_t>(Load(p.token_index + token)) +
                                       static_cast<uint64_t>(Load(p.seq_delta + seq)));
      return true;
    }
  }
  return false;
}

// True if `position` lies in [0, position_limit); otherwise sets the error bit.
__device__ __forceinline__ bool PositionInRange(const RotaryParams& p, int64_t position) {
  if (position < 0 || position >= p.position_limit) {
    atomicOr(p.error_flag, kMropeErrorPositionOutOfRange);
    return false;
  }
  return true;
}

// cos/sin of `pair` (whose inverse frequency is `inv_freq`) at a range-checked `position`: a
// table row, or rope_math.h's PairCosSin (the composition the CPU reference and
// mrope::CosSinTable use).
__device__ __forceinline__ CosSin LookupCosSin(const RotaryParams& p, int pair, float inv_freq,
                                               int64_t position) {
  if (p.cos_table != nullptr) {
    const int64_t i = position * p.table_row_stride + pair;
    return {Load(p.cos_table + i), Load(p.sin_table + i)};
  }
  return PairCosSin(inv_freq, static_cast<float>(position), p.attention_scaling, p.sincos_math);
}

// The shared memory both kernels stage a token group's rotation in: positions (and which
// tokens are skipped), the per-pair parameters and cos/sin of each (token, pair), or of each
// (token, element) with split halves. Position slots are (token, axis) at token * num_axes +
// axis: three axes for kMaxTokensPerBlock tokens, more axes for fewer (kSharedPositions).
struct RotationShared {
  alignas(16) float cos[kSharedPairs];
  alignas(16) float sin[kSharedPairs];
  int64_t position[kSharedPositions];
  bool skip_axis[kSharedPositions];
  alignas(16) float inv_freq[kMaxRotaryPairs];
  alignas(16) uint32_t pair_axes[kMaxRotaryPairs / 4];  // as RotaryParams::pair_axes
};
static_assert(kMaxRotaryPairs % 16 == 0, "StagePairParameters copies groups of 16 pairs");

// The axes a kernel reads: three (a compile-time constant), or the launch's num_axes for the
// split-halves (XD-RoPE) kernels.
template <bool kSplit>
__device__ __forceinline__ int AxesRead(const RotaryParams& p) {
  if constexpr (kSplit) return p.num_axes;
  return kNumAxes;
}

// The staged positions or skip flags of one token, its num_axes (token, axis) slots from
// token * num_axes: the three-axis kernels index them as [token][axis] rows and, for an item
// i = token * 3 + axis, [i / 3][i % 3] (the address arithmetic they compiled to before there
// were more axes: nvcc orders and allocates the flat forms differently).
template <bool kSplit, typename S>
__device__ __forceinline__ S* AxisRow(S (&slots)[kSharedPositions], int token, int num_axes) {
  if constexpr (kSplit) return &slots[token * num_axes];
  return reinterpret_cast<S(&)[kMaxTokensPerBlock][kNumAxes]>(slots)[token];
}
template <bool kSplit, typename S>
__device__ __forceinline__ S* ItemSlot(S (&slots)[kSharedPositions], int i, int num_axes) {
  if constexpr (kSplit) return &slots[i];
  return &reinterpret_cast<S(&)[kMaxTokensPerBlock][kNumAxes]>(slots)[i / num_axes]
                                                                     [i % num_axes];
}

// True if the token must not be touched (beyond num_tokens, or a device error on any axis):
// skip_axis points at the token's num_axes flags.
__device__ __forceinline__ bool TokenSkipped(const bool* skip_axis, int num_axes) {
  // Three axes as one expression, as the three-axis kernels have it.
  bool skipped = Load(&skip_axis[0]) || Load(&skip_axis[1]) || Load(&skip_axis[2]);
  for (int axis = kNumAxes; axis < num_axes; ++axis) skipped = skipped || Load(&skip_axis[axis]);
  return skipped;
}

// Copies inv_freq and the packed axes of the pairs to shared memory (read after the first
// barrier of the kernel, never written again), in one thread with warp-uniform parameter
// addresses, 16 bytes and every load independent. Threads reading their own pairs would make
// constant-bank loads with up to 32 addresses each, served one address at a time: that cost a
// decode launch 0.16-0.36 us on an H100 (kernels/BENCHMARKS.md).
template <int kRotaryDim>
__device__ __forceinline__ void StagePairParameters(const RotaryParams& p, int num_pairs,
                                                    RotationShared& shared) {
  const auto copy_sixteen_pairs = [&](int pair) {
#pragma unroll
    for (int i = 0; i < 16; i += 4) {
      Store(reinterpret_cast<float4*>(&shared.inv_freq[pair + i]),
            Load(reinterpret_cast<const float4*>(&p.inv_freq[pair + i])));
    }
    Store(reinterpret_cast<uint4*>(&shared.pair_axes[pair / 4]),
          Load(reinterpret_cast<const uint4*>(&p.pair_axes[pair / 4])));
  };
  if constexpr (kRotaryDim != 0) {
#pragma unroll
    for (int pair = 0; pair < kRotaryDim / 2; pair += 16) copy_sixteen_pairs(pair);
  } else {
    // Rounded up to whole groups: both arrays hold kMaxRotaryPairs, a multiple of 16. Not
    // unrolled: nvcc's four-fold unrolling held 80 registers of loads at once and made the
    // generic-rotary_dim kernels spill.
#pragma unroll 1
    for (int pair = 0; pair < num_pairs; pair += 16) copy_sixteen_pairs(pair);
  }
}

// Positions of each (token, axis) of the group starting at group_token into shared memory,
// with the device error checks (a skipped token gets position 0, so that StageCosSin needs
// no branch). A thread's first position is loaded before the first group stages the pair
// parameters (stage_pairs), so the two latencies overlap. The caller places the barrier.
template <int kRotaryDim, bool kSplit>
__device__ __forceinline__ void StagePositions(const RotaryParams& p, int64_t group_token,
                                               int64_t num_tokens, int tokens_per_block,
                                               int num_pairs, int tid, int num_threads,
                                               bool stage_pairs, RotationShared& shared) {
  const int num_axes = AxesRead<kSplit>(p);
  const int num_items = tokens_per_block * num_axes;
  const auto load_item = [&](int i, int64_t* position) {
    return group_token + i / num_axes < num_tokens &&
           LoadPosition(p, group_token + i / num_axes, i % num_axes, position);
  };
  int64_t position = 0;
  bool loaded = tid < num_items && load_item(tid, &position);
  // The last thread stages: in a block of several warps, not the warp loading positions.
  if (tid == num_threads - 1 && stage_pairs) {
    StagePairParameters<kRotaryDim>(p, num_pairs, shared);
  }
  for (int i = tid; i < num_items; i += num_threads) {
    if (i != tid) {
      position = 0;
      loaded = load_item(i, &position);
    }
    const bool valid = loaded && PositionInRange(p, position);
    Store(ItemSlot<kSplit>(shared.position, i, num_axes), valid ? position : 0);
    Store(ItemSlot<kSplit>(shared.skip_axis, i, num_axes), !valid);
  }
}

// cos/sin of each (token, pair) of the group, slot tz * num_pairs + pair, from the staged
// positions and pair parameters (after a barrier that follows StagePositions); sin negated for
// the inverse rotation. kSplit: of each (token, element), slot tz * 2 * num_pairs + half *
// num_pairs + pair, the half's own axis at the pair's frequency.
template <bool kSplit>
__device__ __forceinline__ void StageCosSin(const RotaryParams& p, int tokens_per_block,
                                            int num_pairs, int tid, int num_threads,
                                            RotationShared& shared) {
  const int num_axes = AxesRead<kSplit>(p);
  const int slots_per_token = kSplit ? 2 * num_pairs : num_pairs;
  for (int i = tid; i < tokens_per_block * slots_per_token; i += num_threads) {
    const int tz = i / slots_per_token;
    const int slot = i - tz * slots_per_token;
    const bool second = kSplit && slot >= num_pairs;
    const int pair = second ? slot - num_pairs : slot;
    const CosSin cs = ForDirection(
        LookupCosSin(p, pair, Load(&shared.inv_freq[pair]),
                     Load(&AxisRow<kSplit>(shared.position, tz, num_axes)[UnpackPairAxis<kSplit>(
                         shared.pair_axes, pair, second)])),
        p.direction);
    Store(&shared.cos[i], cs.cos);
    Store(&shared.sin[i], cs.sin);
  }
}

}  // namespace kernel_internal
}  // namespace mrope

#endif  // MROPE_KERNELS_MROPE_DEVICE_CUH_
