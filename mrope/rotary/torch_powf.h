#ifndef MROPE_ROTARY_TORCH_POWF_H_
#define MROPE_ROTARY_TORCH_POWF_H_

// float32 pow that returns exactly what PyTorch's CPU kernel returns for `base ** tensor`.
//
// HF transformers builds inv_freq as `1.0 / (base ** (arange(0, d, 2).float() / d))` in float32.
// torch evaluates that pow with SLEEF's vectorized powf (the 1.0-ulp variant, FMA build), which
// is not correctly rounded: for theta 1e6 and 5e6 with d = 128, one entry of 64 differs by 1 ulp
// from the correctly rounded value, and at positions ~1e4 that 1 ulp moves the fp32 angle by
// many ulp. This header reimplements the same algorithm (log in double-float arithmetic, product
// with the exponent, exp in double-float arithmetic) so mrope's inv_freq matches HF bit for bit.
// Algorithm and polynomial coefficients: SLEEF (https://sleef.org, Boost Software License 1.0),
// xpowf in sleefsimdsp.c. Every float operation below is an explicit fma or a rounded op from
// rope_math.h: intrinsics under nvcc, plain operators on the host, so host translation units
// must be compiled with -ffp-contract=off (all mrope targets are; with contraction and FMA
// hardware the results change).
//
// Domain: x > 0 and finite, y finite, result a normal float. That is all inv_freq needs (theta > 1,
// exponent in [0, 1)); other inputs give unspecified values (no error handling here).

#include "mrope/rotary/rope_math.h"

namespace mrope {
namespace torch_powf_internal {

MROPE_HOST_DEVICE inline float Sub(float a, float b) { return AddRounded(a, -b); }

// floor(log2(d)) for a positive normal float, and d * 2^e (exact).
MROPE_HOST_DEVICE inline int ILogB(float d) {
  int e = 0;
#if defined(__CUDA_ARCH__)
  frexpf(d, &e);
#else
  std::frexp(d, &e);
#endif
  return e - 1;
}
MROPE_HOST_DEVICE inline float LdExp(float d, int e) {
#if defined(__CUDA_ARCH__)
  return ldexpf(d, e);
#else
  return std::ldexp(d, e);
#endif
}
MROPE_HOST_DEVICE inline int RoundToInt(float d) {  // round half to even
#if defined(__CUDA_ARCH__)
  return __float2int_rn(d);
#else
  return static_cast<int>(std::rint(d));
#endif
}

// Unevaluated sum hi + lo of two floats ("double-float").
struct Df {
  float hi;
  float lo;
};

MROPE_HOST_DEVICE inline Df Normalize(Df t) {
  const float hi = AddRounded(t.hi, t.lo);
  return {hi, AddRounded(Sub(t.hi, hi), t.lo)};
}
MROPE_HOST_DEVICE inline Df Scale(Df d, float s) {
  return {MulRounded(d.hi, s), MulRounded(d.lo, s)};
}
// Sum of two floats, any magnitudes (TwoSum).
MROPE_HOST_DEVICE inline Df Add2(float x, float y) {
  const float hi = AddRounded(x, y);
  const float v = Sub(hi, x);
  return {hi, AddRounded(Sub(x, Sub(hi, v)), Sub(y, v))};
}
MROPE_HOST_DEVICE inline Df Add2(Df x, float y) {
  const float hi = AddRounded(x.hi, y);
  const float v = Sub(hi, x.hi);
  const float lo = AddRounded(Sub(x.hi, Sub(hi, v)), Sub(y, v));
  return {hi, AddRounded(lo, x.lo)};
}
MROPE_HOST_DEVICE inline Df Add2(Df x, Df y) {
  const float hi = AddRounded(x.hi, y.hi);
  const float v = Sub(hi, x.hi);
  const float lo = AddRounded(Sub(x.hi, Sub(hi, v)), Sub(y.hi, v));
  return {hi, AddRounded(lo, AddRounded(x.lo, y.lo))};
}
// Sums that assume |x| >= |y| (FastTwoSum).
MROPE_HOST_DEVICE inline Df AddFast(Df x, Df y) {
  const float hi = AddRounded(x.hi, y.hi);
  return {hi, AddRounded(AddRounded(AddRounded(Sub(x.hi, hi), y.hi), x.lo), y.lo)};
}
MROPE_HOST_DEVICE inline Df AddFast(float x, Df y) {
  const float hi = AddRounded(x, y.hi);
  return {hi, AddRounded(AddRounded(Sub(x, hi), y.hi), y.lo)};
}
MROPE_HOST_DEVICE inline Df Mul(Df x, float y) {
  const float hi = MulRounded(x.hi, y);
  return {hi, FusedMulAdd(x.lo, y, FusedMulAdd(x.hi, y, -hi))};
}
MROPE_HOST_DEVICE inline Df Mul(Df x, Df y) {
  const float hi = MulRounded(x.hi, y.hi);
  return {hi, FusedMulAdd(x.hi, y.lo, FusedMulAdd(x.lo, y.hi, FusedMulAdd(x.hi, y.hi, -hi)))};
}
MROPE_HOST_DEVICE inline Df Square(Df x) {
  const float hi = MulRounded(x.hi, x.hi);
  return {hi, FusedMulAdd(AddRounded(x.hi, x.hi), x.lo, FusedMulAdd(x.hi, x.hi, -hi))};
}
MROPE_HOST_DEVICE inline Df Div(Df n, Df d) {
  const float t = DivRounded(1.0f, d.hi);
  const float hi = MulRounded(n.hi, t);
  const float u = FusedMulAdd(t, n.hi, -hi);
  float lo = FusedMulAdd(-d.lo, t, FusedMulAdd(-d.hi, t, 1.0f));
  lo = FusedMulAdd(hi, lo, FusedMulAdd(n.lo, t, u));
  return {hi, lo};
}

// log(d) as a double-float, d > 0 normal.
MROPE_HOST_DEVICE inline Df Log(float d) {
  const int e = ILogB(MulRounded(d, 1.0f / 0.75f));
  const float m = LdExp(d, -e);  // in [0.75, 1.5)
  const Df x = Div(Add2(-1.0f, m), Add2(1.0f, m));
  const Df x2 = Square(x);
  float t = 0.240320354700088500976562f;
  t = FusedMulAdd(t, x2.hi, 0.285112679004669189453125f);
  t = FusedMulAdd(t, x2.hi, 0.400007992982864379882812f);
  const Df c = {0.66666662693023681640625f, 3.69183861259614332084311e-09f};
  const Df ln2 = {0.69314718246459960938f, -1.904654323148236017e-09f};
  return Add2(Mul(ln2, static_cast<float>(e)),
              Add2(Scale(x, 2.0f), Mul(Mul(x2, x), Add2(Mul(x2, t), c))));
}

// exp(d) for a double-float d.
MROPE_HOST_DEVICE inline float Exp(Df d) {
  constexpr float kInvLn2 = 1.442695040888963407359924681001892137f;
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.428606765330187045e-06f;
  const int q = RoundToInt(MulRounded(AddRounded(d.hi, d.lo), kInvLn2));
  const float qf = static_cast<float>(q);
  Df s = Add2(d, MulRounded(qf, -kLn2Hi));
  s = Add2(s, MulRounded(qf, -kLn2Lo));
  s = Normalize(s);
  float u = 0.00136324646882712841033936f;
  u = FusedMulAdd(u, s.hi, 0.00836596917361021041870117f);
  u = FusedMulAdd(u, s.hi, 0.0416710823774337768554688f);
  u = FusedMulAdd(u, s.hi, 0.166665524244308471679688f);
  u = FusedMulAdd(u, s.hi, 0.499999850988388061523438f);
  Df t = AddFast(s, Mul(Square(s), u));
  t = AddFast(1.0f, t);
  return LdExp(AddRounded(t.hi, t.lo), q);
}

}  // namespace torch_powf_internal

// x^y as torch's float32 CPU pow computes it (see the file comment for the domain).
MROPE_HOST_DEVICE inline float TorchPowf(float x, float y) {
  if (y == 0.0f || x == 1.0f) return 1.0f;
  namespace internal = torch_powf_internal;
  return internal::Exp(internal::Mul(internal::Log(x), y));
}

}  // namespace mrope

#endif  // MROPE_ROTARY_TORCH_POWF_H_
