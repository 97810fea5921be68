#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/eager_baseline.h"

namespace mrope {
namespace eager_baseline {
namespace {

using bf16 = __nv_bfloat16;

constexpr int kThreads = 256;

// One thread per output element, like PyTorch's elementwise kernels (grid-strided).
dim3 Grid(int64_t elements) {
  return dim3(static_cast<unsigned>(
      std::min<int64_t>((elements + kThreads - 1) / kThreads, int64_t{1} << 20)));
}

// index_select: out[r][:] = cache[positions[r]][:] for the 3 * T rows.
__global__ void GatherRows(bf16* out, const bf16* cache, const int64_t* positions, int64_t rows,
                           int width) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < rows * width;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / width;
    out[i] = cache[positions[r] * width + i % width];
  }
}

// cat of the per-axis sections: out[t][j] = gathered[axis[j]][t][offset + j].
__global__ void Weave(bf16* out, const bf16* gathered, const uint8_t* pair_axis, int64_t tokens,
                      int pairs, int width, int offset) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < tokens * pairs;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t t = i / pairs;
    const int j = static_cast<int>(i % pairs);
    out[i] = gathered[(pair_axis[j] * tokens + t) * width + offset + j];
  }
}

// A [T][H][W] operand: element (t, h, w) at data + t * token_stride + h * head_stride + w
// (head_stride 0 broadcasts cos/sin over heads).
struct Operand {
  const bf16* data;
  int64_t token_stride;
  int64_t head_stride;
};

enum class Op { kMul, kAdd, kSub };

// out[t][h][w] = a op b, computed in fp32 and rounded to bf16 (one PyTorch op).
template <Op kOp>
__global__ void Binary(bf16* out, Operand a, Operand b, int64_t tokens, int heads, int width) {
  const int64_t n = tokens * heads * width;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int w = static_cast<int>(i % width);
    const int h = static_cast<int>(i / width % heads);
    const int64_t t = i / (int64_t{width} * heads);
    const float x = __bfloat162float(a.data[t * a.token_stride + h * a.head_stride + w]);
    const float y = __bfloat162float(b.data[t * b.token_stride + h * b.head_stride + w]);
    const float r = kOp == Op::kMul ? x * y : kOp == Op::kAdd ? x + y : x - y;
    out[i] = __float2bfloat16_rn(r);
  }
}

// torch.cat((o1, o2), -1): out[t][h][:] = o1[t][h][:] ++ o2[t][h][:].
__global__ void Cat(bf16* out, const bf16* o1, const bf16* o2, int64_t rows, int half) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < rows * 2 * half;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / (2 * half);
    const int c = static_cast<int>(i % (2 * half));
    out[i] = c < half ? o1[r * half + c] : o2[r * half + c - half];
  }
}

// x1 * cos - x2 * sin and x2 * cos + x1 * sin for one of q / k, then the cat into `out`.
void ApplyRotary(const bf16* x, bf16* out, int heads, const EagerArgs& args, cudaStream_t stream) {
  const int64_t t = args.num_tokens;
  const int d = args.head_dim;
  const int half = d / 2;
  const int64_t n = t * heads * half;
  const Operand x1{x, int64_t{heads} * d, d};
  const Operand x2{x + half, int64_t{heads} * d, d};
  const Operand cos{static_cast<const bf16*>(args.scratch.cos), half, 0};
  const Operand sin{static_cast<const bf16*>(args.scratch.sin), half, 0};
  bf16* p[4];
  for (int i = 0; i < 4; ++i) p[i] = static_cast<bf16*>(args.scratch.products[i]);
  bf16* o1 = static_cast<bf16*>(args.scratch.halves[0]);
  bf16* o2 = static_cast<bf16*>(args.scratch.halves[1]);
  const auto dense = [&](const bf16* data) { return Operand{data, int64_t{heads} * half, half}; };
  Binary<Op::kMul><<<Grid(n), kThreads, 0, stream>>>(p[0], x1, cos, t, heads, half);
  Binary<Op::kMul><<<Grid(n), kThreads, 0, stream>>>(p[1], x2, sin, t, heads, half);
  Binary<Op::kSub><<<Grid(n), kThreads, 0, stream>>>(o1, dense(p[0]), dense(p[1]), t, heads, half);
  Binary<Op::kMul><<<Grid(n), kThreads, 0, stream>>>(p[2], x2, cos, t, heads, half);
  Binary<Op::kMul><<<Grid(n), kThreads, 0, stream>>>(p[3], x1, sin, t, heads, half);
  Binary<Op::kAdd><<<Grid(n), kThreads, 0, stream>>>(o2, dense(p[2]), dense(p[3]), t, heads, half);
  Cat<<<Grid(2 * n), kThreads, 0, stream>>>(out, o1, o2, t * heads, half);
}

}  // namespace

void EnqueueEagerMrope(const EagerArgs& args, GpuStream stream) {
  const int64_t t = args.num_tokens;
  const int d = args.head_dim;
  const int half = d / 2;
  bf16* gathered = static_cast<bf16*>(args.scratch.gathered);
  GatherRows<<<Grid(3 * t * d), kThreads, 0, stream>>>(
      gathered, static_cast<const bf16*>(args.cos_sin_cache), args.positions, 3 * t, d);
  Weave<<<Grid(t * half), kThreads, 0, stream>>>(static_cast<bf16*>(args.scratch.cos), gathered,
                                                 args.pair_axis, t, half, d, 0);
  Weave<<<Grid(t * half), kThreads, 0, stream>>>(static_cast<bf16*>(args.scratch.sin), gathered,
                                                 args.pair_axis, t, half, d, half);
  ApplyRotary(static_cast<const bf16*>(args.q), static_cast<bf16*>(args.q_out), args.num_q_heads,
              args, stream);
  ApplyRotary(static_cast<const bf16*>(args.k), static_cast<bf16*>(args.k_out), args.num_k_heads,
              args, stream);
}

}  // namespace eager_baseline
}  // namespace mrope
