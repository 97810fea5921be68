#ifndef MROPE_ROTARY_QK_NORM_MATH_H_
#define MROPE_ROTARY_QK_NORM_MATH_H_

// The per-head RMSNorm of q and k (Qwen3's q_norm / k_norm) as the fused kernel computes it, in
// fp32: n = x * r * w_eff, r = 1 / sqrt(sum(x^2) / D + eps), of the head before the rotary or
// (kWeightAfterRotary) of the rotated head. Plain C++ and nvcc both compile
// this header, and it fixes the order of the sum of squares, so the CPU reference
// (kernels/fused_reference.h) and the kernel agree bit for bit:
//   - a head of D elements is cut into chunks of NormChunkElements(element size) elements
//     (one 16-byte access of the input);
//   - NormLanes(D, chunk) lanes sum it; lane l takes chunks l, l + lanes, l + 2 * lanes, ...
//     in that order and their elements in order, each square and each sum rounded;
//   - the lanes' sums are then combined by a butterfly: for m = lanes / 2, ..., 1, every lane
//     adds the sum of lane l ^ m (AddRounded is commutative, so every lane ends equal).

#include <cstdint>

#include "mrope/rotary/rope_math.h"

namespace mrope {

enum class QkNormForm : uint8_t {
  kNone = 0,
  kWeight = 1,         // w * x / rms(x): Qwen3, Qwen3-VL, Qwen3-Omni
  kOnePlusWeight = 2,  // (1 + w) * x / rms(x), w zero-centred: Qwen3-Next, Qwen3.5
  kWeightAfterRotary = 3,  // w * y / rms(y) of the rotated head y: HunYuan-VL
};

inline constexpr bool IsQkNormForm(QkNormForm form) {
  return form == QkNormForm::kNone || form == QkNormForm::kWeight ||
         form == QkNormForm::kOnePlusWeight || form == QkNormForm::kWeightAfterRotary;
}

// True for the forms that normalise the head before it is rotated.
MROPE_HOST_DEVICE constexpr bool NormBeforeRotary(QkNormForm form) {
  return form == QkNormForm::kWeight || form == QkNormForm::kOnePlusWeight;
}

// Most lanes that sum one head: one warp.
inline constexpr int kMaxNormLanes = 32;

MROPE_HOST_DEVICE constexpr int NormChunkElements(int element_size) { return 16 / element_size; }

// The largest power of two <= min(kMaxNormLanes, number of chunks), at least 1.
MROPE_HOST_DEVICE constexpr int NormLanes(int head_dim, int chunk_elements) {
  const int chunks = (head_dim + chunk_elements - 1) / chunk_elements;
  int lanes = 1;
  while (lanes * 2 <= chunks && lanes < kMaxNormLanes) lanes *= 2;
  return lanes;
}

#if defined(__CUDACC__)
#define MROPE_UNROLL _Pragma("unroll")
#else
#define MROPE_UNROLL
#endif

// The sum every lane holds after the butterfly over partial[0, lanes) (lanes a power of two
// <= kMaxNormLanes): at distance m = lanes / 2, ..., 1, s[l] += s[l + m].
MROPE_HOST_DEVICE inline float ButterflySum(const float* partial, int lanes) {
  float s[kMaxNormLanes];
  MROPE_UNROLL
  for (int l = 0; l < kMaxNormLanes; ++l) s[l] = l < lanes ? partial[l] : 0.0f;
  MROPE_UNROLL
  for (int m = kMaxNormLanes / 2; m >= 1; m /= 2) {
    if (m < lanes) {
      MROPE_UNROLL
      for (int l = 0; l < m; ++l) s[l] = AddRounded(s[l], s[l + m]);
    }
  }
  return s[0];
}

MROPE_HOST_DEVICE inline float SqrtRounded(float x) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}

// r = 1 / sqrt(sum_of_squares / head_dim + eps), each step rounded to fp32 (correctly rounded
// sqrt and division on host and device; never rsqrtf).
MROPE_HOST_DEVICE inline float RmsScale(float sum_of_squares, int head_dim, float eps) {
  const float mean = DivRounded(sum_of_squares, static_cast<float>(head_dim));
  return DivRounded(1.0f, SqrtRounded(AddRounded(mean, eps)));
}

// The weight an element is multiplied by: w, or 1 + w (zero-centred form).
MROPE_HOST_DEVICE inline float NormWeight(QkNormForm form, float weight) {
  return form == QkNormForm::kOnePlusWeight ? AddRounded(1.0f, weight) : weight;
}

// (x * r) * weight, as HF's Qwen3 and Qwen3.5 norms order it.
MROPE_HOST_DEVICE inline float Normalize(float x, float rms_scale, float weight) {
  return MulRounded(MulRounded(x, rms_scale), weight);
}

}  // namespace mrope

#endif  // MROPE_ROTARY_QK_NORM_MATH_H_
