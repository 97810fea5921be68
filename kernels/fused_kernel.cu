// The fused kernel: QK-RMSNorm + M-RoPE + q out + paged K/V append (contract:
// kernels/fused_kernel.h).
//
// Block = (lanes per head) x (head slots) x (tokens); blockIdx.x picks a group of tokens,
// blockIdx.y a chunk of the q+k heads (more than one chunk only for small T). The lanes of a
// head own its 16-byte chunks round-robin (mrope/rotary/qk_norm_math.h: the order that fixes
// the sum of squares). Per token group:
//   0. (16-bit vector path) every lane loads the first chunk of its head in each of its first
//      kPassesInFlight passes, so that they are in flight together (kernels/BENCHMARKS.md);
//   1. positions, cache slots and cos/sin into shared memory (StagePositions / StageCosSin,
//      shared with the M-RoPE kernel);
//   2. per pass of heads: every lane loads its other chunks, sums its squares and stages the raw
//      values (NeoX partners live in other lanes' chunks; GPT-J's in its own); a k head's lanes
//      also append its v head to the cache; one barrier;
//   3. every lane finishes the sum from the staged partial sums, normalises, rotates with the
//      partner values (from the stage for NeoX), rounds once and stores q (or k to the cache /
//      k_out). A norm of the rotated head (QkNormForm::kWeightAfterRotary) sums the squares of
//      the rotated values instead and exchanges them across a second barrier (3b) before it
//      normalises.
// The stage and the partial sums are double-buffered, so one barrier per pass suffices: pass
// i + 2 writes the buffer of pass i only after every thread has passed the barrier of
// pass i + 1, that is, finished reading pass i.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/internal/fused_params.h"
#include "kernels/kernel_launch.cuh"
#include "kernels/kernel_params.h"
#include "kernels/mrope_device.cuh"
#include "mrope/rotary/fp8_e4m3.h"
#include "mrope/rotary/qk_norm_math.h"
#include "mrope/rotary/rope_math.h"

namespace mrope {
namespace kernel_internal {
namespace {

// At namespace scope for the host execution harness (see mrope_kernel.cu).
struct FusedShared {
  RotationShared rotation;
  int64_t slot[kMaxTokensPerBlock];  // -1: no cache write
  bool slot_bad[kMaxTokensPerBlock];
  alignas(16) float stage[2][kFusedStageFloats];
  float partial[2][kMaxBlockThreads];
};
__shared__ FusedShared fused;

// Elements per 16-byte input chunk, and the most chunks one lane owns (head_dim <= 512: at
// most 2 per lane below 32 chunks, head_dim / 32 elements at 32 lanes).
template <typename T>
constexpr int kChunk = NormChunkElements(sizeof(T));
template <typename T>
constexpr int kMaxChunks = kMaxHeadDim / kChunk<T> / kMaxNormLanes > 2
                               ? kMaxHeadDim / kChunk<T> / kMaxNormLanes
                               : 2;

template <typename E>
__device__ __forceinline__ E* HeadAt(const StridedHeads& v, int64_t token, int head) {
  return static_cast<E*>(v.data) + token * v.token_stride + int64_t{head} * v.head_stride;
}

// Head `head` of the token in cache slot `slot` (>= 0, checked against num_slots).
template <typename E>
__device__ __forceinline__ E* CacheHeadAt(const FusedParams& p, void* cache, int64_t slot,
                                          int head) {
  return static_cast<E*>(cache) + (slot / p.block_size) * p.cache_block_stride +
         (slot % p.block_size) * p.cache_slot_stride + int64_t{head} * p.cache_head_stride;
}

__device__ __forceinline__ uint8_t ToFp8(float value, float scale) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  // The hardware conversion; tests/kernels/fused_kernel_test.cc checks it against
  // FloatToFp8E4m3 for every bf16 value.
  return __nv_cvt_float_to_fp8(DivRounded(value, scale), __NV_SATFINITE, __NV_E4M3);
#else
  return ScaledFp8E4m3(value, scale);
#endif
}

template <typename T>
__device__ __forceinline__ typename Element<T>::Bits LoadBits(const T* p MROPE_ACCESS_SITE) {
  return Load(reinterpret_cast<const typename Element<T>::Bits*>(p) MROPE_PASS_SITE);
}

template <typename T>
__device__ __forceinline__ void ToFloats(const Vec<T, kChunk<T>>& v, float* out) {
#pragma unroll
  for (int e = 0; e < kChunk<T>; ++e) out[e] = Element<T>::ToFloat(v.Get(e));
}

// Elements [first, first + kChunk) of a head (those below head_dim) as fp32.
template <typename T, bool kVector>
__device__ __forceinline__ void LoadChunk(const T* head, int first, int head_dim,
                                          float* out MROPE_ACCESS_SITE) {
  constexpr int kC = kChunk<T>;
  if constexpr (kVector) {
    ToFloats<T>(LoadVec<T, kC>(head + first MROPE_PASS_SITE), out);
  } else {
#pragma unroll
    for (int e = 0; e < kC; ++e) {
      out[e] = first + e < head_dim
                   ? Element<T>::ToFloat(LoadBits(head + first + e MROPE_PASS_SITE))
                   : 0.0f;
    }
  }
}

// Stores y[0, kChunk) at elements [first, ...) of a head of dtype T, or of fp8 e4m3
// (value / scale) when `fp8`.
template <typename T, bool kVector>
__device__ __forceinline__ void StoreChunk(void* head, bool fp8, float scale, int first,
                                           int head_dim, const float* y MROPE_ACCESS_SITE) {
  constexpr int kC = kChunk<T>;
  if (fp8) {
    uint8_t* out = static_cast<uint8_t*>(head) + first;
    if constexpr (kVector) {
      uint32_t words[kC / 4] = {};
#pragma unroll
      for (int e = 0; e < kC; ++e) words[e / 4] |= uint32_t{ToFp8(y[e], scale)} << (8 * (e % 4));
      if constexpr (kC == 8) {
        Store(reinterpret_cast<uint2*>(out), make_uint2(words[0], words[1]) MROPE_PASS_SITE);
      } else {
        Store(reinterpret_cast<uint32_t*>(out), words[0] MROPE_PASS_SITE);
      }
    } else {
#pragma unroll
      for (int e = 0; e < kC; ++e) {
        if (first + e < head_dim) Store(out + e, ToFp8(y[e], scale) MROPE_PASS_SITE);
      }
    }
    return;
  }
  T* out = static_cast<T*>(head) + first;
  if constexpr (kVector) {
    Vec<T, kC> v{};
#pragma unroll
    for (int e = 0; e < kC; ++e) v.Set(e, Element<T>::FromFloat(y[e]));
    StoreVec<T, kC>(out, v MROPE_PASS_SITE);
  } else {
#pragma unroll
    for (int e = 0; e < kC; ++e) {
      if (first + e < head_dim) {
        Store(reinterpret_cast<typename Element<T>::Bits*>(out + e),
              Element<T>::FromFloat(y[e]) MROPE_PASS_SITE);
      }
    }
  }
}

// Copies chunk `first` of a v head to the cache: the bits as they are, or fp8 of value / scale.
template <typename T, bool kVector>
__device__ __forceinline__ void AppendValueChunk(const T* v, void* cache_head, bool fp8,
                                                 float scale, int first,
                                                 int head_dim MROPE_ACCESS_SITE) {
  constexpr int kC = kChunk<T>;
  if (fp8) {
    float values[kC];
    LoadChunk<T, kVector>(v, first, head_dim, values MROPE_PASS_SITE);
    StoreChunk<T, kVector>(cache_head, true, scale, first, head_dim, values MROPE_PASS_SITE);
  } else if constexpr (kVector) {
    StoreVec<T, kC>(static_cast<T*>(cache_head) + first,
                    LoadVec<T, kC>(v + first MROPE_PASS_SITE) MROPE_PASS_SITE);
  } else {
    for (int e = 0; e < kC && first + e < head_dim; ++e) {
      Store(reinterpret_cast<typename Element<T>::Bits*>(static_cast<T*>(cache_head) + first + e),
            LoadBits(v + first + e MROPE_PASS_SITE) MROPE_PASS_SITE);
    }
  }
}

__device__ __forceinline__ float LoadWeight(const NormParams& norm, int d MROPE_ACCESS_SITE) {
  switch (norm.weight_dtype) {
    case DType::kBFloat16:
      return Element<__nv_bfloat16>::ToFloat(
          Load(static_cast<const uint16_t*>(norm.weight) + d MROPE_PASS_SITE));
    case DType::kFloat16:
      return Element<__half>::ToFloat(
          Load(static_cast<const uint16_t*>(norm.weight) + d MROPE_PASS_SITE));
    default:
      return Load(static_cast<const float*>(norm.weight) + d MROPE_PASS_SITE);
  }
}

// True if the head is normalised before the rotary: any norm in the kernels without the XD
// forms (written as they were before those, so that they compile to the same code).
template <bool kXdForms>
__device__ __forceinline__ bool NormFirst(QkNormForm form) {
  if constexpr (kXdForms) return NormBeforeRotary(form);
  return form != QkNormForm::kNone;
}

// Element d of a head after a norm before the rotary (the value itself without one).
template <bool kXdForms>
__device__ __forceinline__ float Normalized(const NormParams& norm, float x, int d,
                                            float rms_scale MROPE_ACCESS_SITE) {
  if (!NormFirst<kXdForms>(norm.form)) return x;
  return Normalize(x, rms_scale, NormWeight(norm.form, LoadWeight(norm, d MROPE_PASS_SITE)));
}

// Stages slot_mapping of the group's tokens; a slot outside [-1, num_slots) sets the error bit
// and marks the token skipped.
__device__ __forceinline__ void StageSlots(const FusedParams& p, int64_t group_token,
                                           int tokens_per_block, int tid) {
  if (tid >= tokens_per_block) return;
  const int64_t token = group_token + tid;
  int64_t slot = -1;
  bool bad = false;
  if (token < p.num_tokens && p.slot_mapping != nullptr) {
    slot = Load(p.slot_mapping + token);
    if (slot < -1 || slot >= p.num_slots) {
      atomicOr(p.rotary.error_flag, kMropeErrorSlotOutOfRange);
      bad = true;
    }
  }
  Store(&fused.slot[tid], slot);
  Store(&fused.slot_bad[tid], bad);
}

// kPasses: passes whose q/k loads a thread issues before the first barrier of its token group
// (FusedPassesInFlight): one pass keeps too few bytes in flight per SM to reach DRAM bandwidth
// (kernels/BENCHMARKS.md, "Calibration"). With more than one, two blocks of up to 256 threads
// must fit on an SM (at most 128 registers per thread); with one, no minimum (0: ptxas's choice,
// 128 registers on sm_80/sm_90 today), but for the fp32 scalar kernel 1 block (167-181
// registers): at its own choice of 128 sm_100's ptxas spilled it.
// kXdForms: the forms HunYuan-VL brought, XD-RoPE's split halves over p.rotary.num_axes axes
// (NeoX; a cos/sin per element, as many slots as FusedLaunchPlan::xd_forms plans for) and the
// norm of the rotated head, whose rotated values live across a second barrier; the other
// kernels are compiled as if they did not exist. These kernels take 1 block (at 128 registers
// the 16-bit ones spilled on sm_80 and sm_90); not yet tuned on a GPU.
template <typename T, bool kVector, int kPasses, bool kXdForms>
constexpr int kFusedMinBlocksPerSm =
    kXdForms ? 1 : kPasses > 1 ? 2 : (!kVector && sizeof(T) == 4) ? 1 : 0;
template <typename T, bool kVector, int kPasses, bool kXdForms>
__global__ void __launch_bounds__(kMaxBlockThreads,
                                  kFusedMinBlocksPerSm<T, kVector, kPasses, kXdForms>)
    FusedMropeKernel(const __grid_constant__ FusedParams p) {
  constexpr int kC = kChunk<T>;
  constexpr int kN = kMaxChunks<T>;
  const int lanes = blockDim.x;
  const int lane = threadIdx.x;
  const int head_slots = blockDim.y;
  const int z = threadIdx.z;
  const int tokens_per_block = blockDim.z;
  const int tid = (z * head_slots + threadIdx.y) * lanes + lane;
  const int num_threads = lanes * head_slots * tokens_per_block;
  const int head_dim = p.head_dim;
  const int rotary_dim = p.rotary_dim;
  const int num_pairs = rotary_dim / 2;
  const int num_axes = AxesRead<kXdForms>(p.rotary);
  const int slots_per_token = kXdForms ? rotary_dim : num_pairs;
  // A norm of the rotated head (HunYuan-VL) needs a second exchange of sums of squares per
  // pass, and so a second barrier, in every thread of the block when a q or k head has it.
  const bool norm_after_rotary =
      kXdForms && (p.q_norm.form == QkNormForm::kWeightAfterRotary ||
                   p.k_norm.form == QkNormForm::kWeightAfterRotary);
  const int num_chunks = (head_dim + kC - 1) / kC;
  const int chunk_begin = blockIdx.y * p.heads_per_chunk;
  const int chunk_end = min(p.num_q_heads + p.num_k_heads, chunk_begin + p.heads_per_chunk);
  const int stage_offset = (z * head_slots + threadIdx.y) * head_dim;
  const bool q_fp8 = p.q_out_dtype == DType::kFloat8E4m3;
  const bool cache_fp8 = p.cache_dtype == DType::kFloat8E4m3;
  const float q_scale = q_fp8 ? Load(p.q_scale) : 1.0f;
  int buffer = 0;

  for (int64_t group = blockIdx.x; group * tokens_per_block < p.num_tokens; group += gridDim.x) {
    const int64_t group_token = group * tokens_per_block;
    const int64_t token = group_token + z;

    // 0. The first chunk of this thread's head in each of its first kPasses passes, raw: the
    //    loads stay in flight while positions and cos/sin are staged. (A second chunk, only
    //    for head_dim > 32 chunks, is loaded in its pass: registers.)
    [[maybe_unused]] Vec<T, kC> ahead[kPasses];
    if constexpr (kPasses > 1) {
#pragma unroll
      for (int pass = 0; pass < kPasses; ++pass) {
        const int head = chunk_begin + pass * head_slots + threadIdx.y;
        if (token >= p.num_tokens || head >= chunk_end) continue;
        const bool is_q = head < p.num_q_heads;
        const T* in =
            HeadAt<const T>(is_q ? p.q : p.k, token, is_q ? head : head - p.num_q_heads);
        ahead[pass] = LoadVec<T, kC>(in + lane * kC);
      }
    }

    // 1. Positions, slots and cos/sin of the group.
    StagePositions<0, kXdForms>(p.rotary, group_token, p.num_tokens, tokens_per_block, num_pairs,
                              tid, num_threads, /*stage_pairs=*/group == blockIdx.x,
                              fused.rotation);
    StageSlots(p, group_token, tokens_per_block, tid);
    __syncthreads();
    // No barrier before the passes: cos/sin are first read after the pass barrier, which
    // every thread reaches (grid_y = ceil(heads / heads_per_chunk): every block has a pass),
    // and the staged positions, slots and skip flags were ordered by the barrier above.
    StageCosSin<kXdForms>(p.rotary, tokens_per_block, num_pairs, tid, num_threads,
                        fused.rotation);
    const bool token_live =
        token < p.num_tokens &&
        !TokenSkipped(AxisRow<kXdForms>(fused.rotation.skip_axis, z, num_axes), num_axes) &&
        !Load(&fused.slot_bad[z]);
    const int64_t slot = Load(&fused.slot[z]);
    const float* cos = fused.rotation.cos + z * slots_per_token;
    const float* sin = fused.rotation.sin + z * slots_per_token;

    // Every thread runs every pass (the barrier inside), active or not.
    for (int base = chunk_begin, pass = 0; base < chunk_end;
         base += head_slots, buffer ^= 1, ++pass) {
      // This pass's first chunk from step 0 (pass < kPasses); the next pass's to the front
      // (static indices: the array stays in registers).
      [[maybe_unused]] const Vec<T, kC> preloaded = ahead[0];
#pragma unroll
      for (int next = 1; next < kPasses; ++next) ahead[next - 1] = ahead[next];
      const int head = base + threadIdx.y;
      const bool active = token_live && head < chunk_end;
      const bool is_q = head < p.num_q_heads;
      const int kv_head = head - p.num_q_heads;
      const NormParams& norm = is_q ? p.q_norm : p.k_norm;
      float* const stage = fused.stage[buffer] + stage_offset;

      // 2. Load, partial sum of squares, stage; v to the cache.
      float x[kN * kC];
      float partial = 0.0f;
      if (active) {
        const T* in = HeadAt<const T>(is_q ? p.q : p.k, token, is_q ? head : kv_head);
#pragma unroll
        for (int i = 0; i < kN; ++i) {
          const int first = (lane + i * lanes) * kC;
          if (first >= head_dim) continue;
          if (kPasses > 1 && i == 0 && pass < kPasses) {
            ToFloats<T>(preloaded, x);
          } else {
            LoadChunk<T, kVector>(in, first, head_dim, x + i * kC);
          }
#pragma unroll
          for (int e = 0; e < kC; ++e) {
            if (first + e >= head_dim) continue;
            const float value = x[i * kC + e];
            if (NormFirst<kXdForms>(norm.form)) {
              partial = AddRounded(partial, MulRounded(value, value));
            }
            if constexpr (!kVector) Store(&stage[first + e], value);
          }
          // Whole chunks in 16-byte stores: scalar stores of lanes kC floats apart would be
          // kC-way bank conflicts (the access report, kernels/BENCHMARKS.md).
          if constexpr (kVector) StoreShared<kC>(stage + first, x + i * kC);
        }
        if (!is_q && slot >= 0) {
          const T* v = HeadAt<const T>(p.v, token, kv_head);
          const float v_scale =
              cache_fp8 ? Load(p.v_scale + (p.per_head_scale ? kv_head : 0)) : 1.0f;
          void* cache_head = cache_fp8 ? static_cast<void*>(CacheHeadAt<uint8_t>(p, p.v_cache,
                                                                                 slot, kv_head))
                                       : static_cast<void*>(CacheHeadAt<T>(p, p.v_cache, slot,
                                                                           kv_head));
          for (int c = lane; c < num_chunks; c += lanes) {
            AppendValueChunk<T, kVector>(v, cache_head, cache_fp8, v_scale, c * kC, head_dim);
          }
        }
      }
      Store(&fused.partial[buffer][tid], partial);
      __syncthreads();
      if (!active && !norm_after_rotary) continue;

      // 3. Norm (before the rotary), rotation.
      float y[kN * kC];
      if (active) {
        const float rms_scale =
            NormFirst<kXdForms>(norm.form)
                ? RmsScale(ButterflySum(&fused.partial[buffer][tid - lane], lanes), head_dim,
                           norm.eps)
                : 1.0f;
#pragma unroll
        for (int i = 0; i < kN; ++i) {
          const int first = (lane + i * lanes) * kC;
          // The partners' raw values: GPT-J's are in this chunk, in registers; NeoX's form one
          // chunk of the other half when the halves are whole chunks, read 16 bytes at a time
          // (scalar reads kC floats apart would be kC-way bank conflicts); else one by one.
          const bool neox = p.layout == RotaryLayout::kNeox;
          const bool partner_chunk = kVector && neox && first + kC <= rotary_dim &&
                                     num_pairs % kC == 0;
          float partners[kC];
          if (partner_chunk) {
            LoadShared(stage + (first < num_pairs ? first + num_pairs : first - num_pairs),
                       partners);
          }
          // A cos/sin per element (the XD forms, NeoX): element d's is slot d, so a whole chunk
          // is read 16 bytes at a time, for the same reason.
          [[maybe_unused]] float chunk_cos[kC];
          [[maybe_unused]] float chunk_sin[kC];
          const bool cos_chunk = kXdForms && kVector && neox && first + kC <= rotary_dim &&
                                 rotary_dim % 4 == 0;
          if (cos_chunk) {
            LoadShared(cos + first, chunk_cos);
            LoadShared(sin + first, chunk_sin);
          }
#pragma unroll
          for (int e = 0; e < kC; ++e) {
            const int d = first + e;
            if (d >= head_dim) continue;
            const float n = Normalized<kXdForms>(norm, x[i * kC + e], d, rms_scale);
            if (d >= rotary_dim) {
              y[i * kC + e] = n;
              continue;
            }
            bool first_of_pair;
            int pair;
            int partner;
            if (p.layout == RotaryLayout::kNeox) {
              first_of_pair = d < num_pairs;
              pair = first_of_pair ? d : d - num_pairs;
              partner = first_of_pair ? d + num_pairs : pair;
            } else {
              first_of_pair = (d & 1) == 0;
              pair = d / 2;
              partner = d ^ 1;
            }
            const float raw_partner = partner_chunk ? partners[e]
                                      : neox        ? Load(&stage[partner])
                                                    : x[i * kC + (e ^ 1)];
            const float np = Normalized<kXdForms>(norm, raw_partner, partner, rms_scale);
            // A cos/sin per element: the second's num_pairs slots on.
            const int cs_slot = kXdForms && !first_of_pair ? pair + num_pairs : pair;
            const CosSin cs = cos_chunk ? CosSin{chunk_cos[e], chunk_sin[e]}
                                        : CosSin{Load(cos + cs_slot), Load(sin + cs_slot)};
            y[i * kC + e] = first_of_pair ? RotatedFirst(n, np, cs) : RotatedSecond(np, n, cs);
          }
        }
      }

      // 3b. A norm of the rotated head: its sums of squares go to this pass's partial sums,
      //     in the slots of the head's own lanes, which no lane read in step 3 (a head has
      //     one form); pass i + 2 rewrites them only after this pass's second barrier.
      if (norm_after_rotary) {
        const bool after = active && norm.form == QkNormForm::kWeightAfterRotary;
        if (after) {
          float rotated_partial = 0.0f;
#pragma unroll
          for (int i = 0; i < kN; ++i) {
            const int first = (lane + i * lanes) * kC;
#pragma unroll
            for (int e = 0; e < kC; ++e) {
              if (first + e >= head_dim) continue;
              const float value = y[i * kC + e];
              rotated_partial = AddRounded(rotated_partial, MulRounded(value, value));
            }
          }
          Store(&fused.partial[buffer][tid], rotated_partial);
        }
        __syncthreads();
        if (!active) continue;
        if (after) {
          const float rms_scale = RmsScale(
              ButterflySum(&fused.partial[buffer][tid - lane], lanes), head_dim, norm.eps);
#pragma unroll
          for (int i = 0; i < kN; ++i) {
            const int first = (lane + i * lanes) * kC;
#pragma unroll
            for (int e = 0; e < kC; ++e) {
              const int d = first + e;
              if (d >= head_dim) continue;
              y[i * kC + e] = Normalize(y[i * kC + e], rms_scale,
                                        NormWeight(norm.form, LoadWeight(norm, d)));
            }
          }
        }
      }

      void* q_head = nullptr;
      void* k_head = nullptr;
      void* k_cache_head = nullptr;
      float k_scale = 1.0f;
      if (is_q) {
        q_head = q_fp8 ? static_cast<void*>(HeadAt<uint8_t>(p.q_out, token, head))
                       : static_cast<void*>(HeadAt<T>(p.q_out, token, head));
      } else {
        if (p.k_out.data != nullptr) k_head = HeadAt<T>(p.k_out, token, kv_head);
        if (slot >= 0) {
          k_cache_head = cache_fp8
                             ? static_cast<void*>(CacheHeadAt<uint8_t>(p, p.k_cache, slot, kv_head))
                             : static_cast<void*>(CacheHeadAt<T>(p, p.k_cache, slot, kv_head));
          if (cache_fp8) k_scale = Load(p.k_scale + (p.per_head_scale ? kv_head : 0));
        }
      }
#pragma unroll
      for (int i = 0; i < kN; ++i) {
        const int first = (lane + i * lanes) * kC;
        if (first >= head_dim) continue;
        if (q_head != nullptr) {
          StoreChunk<T, kVector>(q_head, q_fp8, q_scale, first, head_dim, y + i * kC);
        }
        if (k_head != nullptr) {
          StoreChunk<T, kVector>(k_head, false, 1.0f, first, head_dim, y + i * kC);
        }
        if (k_cache_head != nullptr) {
          StoreChunk<T, kVector>(k_cache_head, cache_fp8, k_scale, first, head_dim, y + i * kC);
        }
      }
    }
  }
}

template <typename T, bool kXdForms>
cudaError_t LaunchForType(const FusedLaunchPlan& plan, cudaStream_t stream) {
  const dim3 grid(plan.grid_x, plan.grid_y);
  const dim3 block(plan.block_x, plan.block_y, plan.block_z);
  if (plan.vectorized) {
    return LaunchKernel<kMaxBlockThreads>(
        &FusedMropeKernel<T, true, FusedPassesInFlight(sizeof(T), true), kXdForms>, grid, block,
        stream, plan.params);
  }
  return LaunchKernel<kMaxBlockThreads>(&FusedMropeKernel<T, false, 1, kXdForms>, grid, block,
                                        stream, plan.params);
}

template <typename T>
cudaError_t LaunchForType(const FusedLaunchPlan& plan, cudaStream_t stream) {
  return plan.xd_forms ? LaunchForType<T, true>(plan, stream)
                       : LaunchForType<T, false>(plan, stream);
}

}  // namespace

EnqueueResult EnqueueFusedKernel(const FusedLaunchPlan& plan, GpuStream stream) {
  return ResultOf(ForStorageType(plan.dtype, [&](auto element) {
    return LaunchForType<decltype(element)>(plan, stream);
  }));
}

}  // namespace kernel_internal
}  // namespace mrope
