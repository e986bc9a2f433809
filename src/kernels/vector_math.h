// exp, sigmoid, tanh, SiLU and softplus written with arithmetic and bit operations only, so loops
// calling them vectorise (libm's expf/tanhf/log1pf are opaque calls and keep the loop scalar).
// Accuracy: exp within 2 ulp on [-87, 88] (Cody-Waite reduction, degree-6 polynomial); tanh and
// sigmoid within a few ulp of their float32 value, using a Taylor polynomial near zero where
// 1 - 2/(e^2x + 1) would cancel; softplus within a few ulp (below). Inputs beyond the float range
// saturate.
#pragma once

#include <bit>
#include <cstdint>

namespace k3::kernels {

__attribute__((always_inline)) inline float FastExp(float x) {
  x = x < -87.3f ? -87.3f : (x > 88.3f ? 88.3f : x);
  // Round x/ln2 to the nearest integer by adding and removing 1.5 * 2^23 (exact for |x| < 2^22,
  // and unlike roundevenf it vectorises on every x86-64 level).
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  // x - n ln2 in two steps (ln2 = hi + lo) keeps the reduced argument exact to float precision.
  float r = x - n * 0.693145751953125f;
  r -= n * 1.428606765330187e-06f;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  return p * std::bit_cast<float>(bits);
}

__attribute__((always_inline)) inline float FastSigmoid(float x) {
  return 1.0f / (1.0f + FastExp(-x));
}

__attribute__((always_inline)) inline float FastTanh(float x) {
  const float ax = x < 0 ? -x : x;
  const float x2 = x * x;
  // |x| < 0.125: x - x^3/3 + 2x^5/15 - 17x^7/315 (next term < 2e-9 relative).
  const float small =
      x * (1.0f + x2 * (-1.0f / 3.0f + x2 * (2.0f / 15.0f + x2 * (-17.0f / 315.0f))));
  const float big = 1.0f - 2.0f / (FastExp(2.0f * ax) + 1.0f);
  const float signed_big = x < 0 ? -big : big;
  return ax < 0.125f ? small : signed_big;
}

__attribute__((always_inline)) inline float FastSilu(float x) { return x * FastSigmoid(x); }

// log(1 + e^x) = max(x, 0) + log1p(u), u = e^-|x| in (0, 1]. log1p(u) = 2 atanh(s) with
// s = u / (2 + u) in (0, 1/3]: the odd series to s^15 leaves < 2e-9 relative (the next term is
// s^17 / 17), and for small u it stays relative to u (no 1 + u rounded first, which would lose
// log1p's low bits and with them most of softplus of negative x). At worst 3.2e-7 relative over
// [-87, 88] (~5 ulp, FastExp's 2 included; libm in float: 1.1e-7); below -87.3 it returns
// softplus(-87.3) ~ 1e-38 instead of a subnormal.
__attribute__((always_inline)) inline float FastSoftplus(float x) {
  const float ax = x < 0 ? -x : x;
  const float u = FastExp(-ax);
  const float s = u / (2.0f + u), s2 = s * s;
  float p = 1.0f / 15.0f;
  p = p * s2 + 1.0f / 13.0f;
  p = p * s2 + 1.0f / 11.0f;
  p = p * s2 + 1.0f / 9.0f;
  p = p * s2 + 1.0f / 7.0f;
  p = p * s2 + 1.0f / 5.0f;
  p = p * s2 + 1.0f / 3.0f;
  p = p * s2 + 1.0f;
  return (x > 0 ? x : 0.0f) + 2.0f * s * p;
}

}  // namespace k3::kernels
