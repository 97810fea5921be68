#include "kernels/unfused_chain.h"

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace mrope {
namespace unfused_chain {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kThreads = 256;
constexpr int kVec = 8;  // bf16 per 16-byte access

__device__ __forceinline__ void Unpack(uint4 w, float (&x)[kVec]) {
  const uint32_t words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    x[i] = __bfloat162float(__ushort_as_bfloat16(static_cast<uint16_t>(words[i / 2] >> (16 * (i % 2)))));
  }
}

__device__ __forceinline__ uint4 Pack(const float (&x)[kVec]) {
  uint32_t words[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    words[i] = uint32_t{__bfloat16_as_ushort(__float2bfloat16_rn(x[2 * i]))} |
               (uint32_t{__bfloat16_as_ushort(__float2bfloat16_rn(x[2 * i + 1]))} << 16);
  }
  return make_uint4(words[0], words[1], words[2], words[3]);
}

// One warp per (token, head) of q then k; lane l owns 16-byte chunks l, l + 32, ...
__global__ void HeadRmsNorm(Bf16Heads q, Bf16Heads k, const bf16* q_weight, const bf16* k_weight,
                            float eps) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t{gridDim.x} * (blockDim.x / 32);
  const int64_t heads = int64_t{q.num_heads} + k.num_heads;
  for (int64_t w = blockIdx.x * int64_t{blockDim.x / 32} + threadIdx.x / 32; w < q.num_tokens * heads;
       w += warps) {
    const int64_t t = w / heads;
    const int h = static_cast<int>(w % heads);
    const bool is_q = h < q.num_heads;
    const Bf16Heads& v = is_q ? q : k;
    const bf16* weight = is_q ? q_weight : k_weight;
    bf16* head = static_cast<bf16*>(v.data) + t * v.token_stride +
                 int64_t{is_q ? h : h - q.num_heads} * v.head_stride;
    const int chunks = v.head_dim / kVec;
    float sum = 0.0f;
    for (int c = lane; c < chunks; c += 32) {
      float x[kVec];
      Unpack(*reinterpret_cast<const uint4*>(head + c * kVec), x);
      for (float value : x) sum += value * value;
    }
    for (int m = 16; m >= 1; m /= 2) sum += __shfl_xor_sync(0xFFFFFFFFu, sum, m);
    const float r = rsqrtf(sum / v.head_dim + eps);
    for (int c = lane; c < chunks; c += 32) {
      float x[kVec];
      float wt[kVec];
      Unpack(*reinterpret_cast<const uint4*>(head + c * kVec), x);
      Unpack(*reinterpret_cast<const uint4*>(weight + c * kVec), wt);
      for (int i = 0; i < kVec; ++i) x[i] = x[i] * r * wt[i];
      *reinterpret_cast<uint4*>(head + c * kVec) = Pack(x);
    }
  }
}

// One thread per 16-byte chunk of k and of v.
__global__ void CacheAppend(CacheAppendArgs a) {
  const int chunks = a.k.head_dim / kVec;
  const int64_t per_token = int64_t{a.k.num_heads} * chunks;
  const int64_t total = 2 * a.k.num_tokens * per_token;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const bool is_v = i >= total / 2;
    const int64_t j = is_v ? i - total / 2 : i;
    const int64_t t = j / per_token;
    const int h = static_cast<int>((j % per_token) / chunks);
    const int c = static_cast<int>(j % chunks);
    const int64_t slot = a.slot_mapping[t];
    if (slot < 0) continue;
    const Bf16Heads& src = is_v ? a.v : a.k;
    const uint4 w = *reinterpret_cast<const uint4*>(static_cast<const bf16*>(src.data) +
                                                    t * src.token_stride + h * src.head_stride +
                                                    c * kVec);
    const int64_t offset = (slot / a.block_size) * a.block_stride +
                           (slot % a.block_size) * a.slot_stride + h * a.head_stride + c * kVec;
    void* cache = is_v ? a.v_cache : a.k_cache;
    if (!a.fp8) {
      *reinterpret_cast<uint4*>(static_cast<bf16*>(cache) + offset) = w;
      continue;
    }
    float x[kVec];
    Unpack(w, x);
    const float scale = *(is_v ? a.v_scale : a.k_scale);
    uint32_t words[2] = {0, 0};
    for (int e = 0; e < kVec; ++e) {
      words[e / 4] |= uint32_t{__nv_cvt_float_to_fp8(x[e] / scale, __NV_SATFINITE, __NV_E4M3)}
                      << (8 * (e % 4));
    }
    *reinterpret_cast<uint2*>(static_cast<uint8_t*>(cache) + offset) = make_uint2(words[0], words[1]);
  }
}

unsigned Blocks(int64_t threads) {
  return static_cast<unsigned>(std::clamp<int64_t>((threads + kThreads - 1) / kThreads, 1, 1 << 20));
}

}  // namespace

void EnqueueHeadRmsNorm(const Bf16Heads& q, const Bf16Heads& k, const void* q_weight,
                        const void* k_weight, float eps, GpuStream stream) {
  const int64_t warps = q.num_tokens * (int64_t{q.num_heads} + k.num_heads);
  HeadRmsNorm<<<Blocks(32 * warps), kThreads, 0, stream>>>(
      q, k, static_cast<const bf16*>(q_weight), static_cast<const bf16*>(k_weight), eps);
}

void EnqueueCacheAppend(const CacheAppendArgs& args, GpuStream stream) {
  const int64_t threads = 2 * args.k.num_tokens * args.k.num_heads * (args.k.head_dim / kVec);
  CacheAppend<<<Blocks(threads), kThreads, 0, stream>>>(args);
}

}  // namespace unfused_chain
}  // namespace mrope
