// Helpers for the CPU kernels' hot loops (KDA recurrence, attention, sampling). K3_MULTIVERSION
// compiles a function for AVX-512, AVX2+FMA and the x86-64-v2 baseline and picks one at load time
// (GCC target_clones); inside such a function, Dot's 16 independent lanes (DotInDouble's 8) let
// the compiler vectorise the reduction without reassociating floating-point sums (which -O3 alone
// never does).
#pragma once

#include <bit>
#include <cstdint>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define K3_MULTIVERSION __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define K3_MULTIVERSION
#endif

namespace k3::kernels {

__attribute__((always_inline)) inline float Dot(const float* a, const float* b, int64_t n) {
  float lanes[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int l = 0; l < 16; ++l) lanes[l] += a[i + l] * b[i + l];
  }
  float sum = 0.0f;
  for (; i < n; ++i) sum += a[i] * b[i];
  for (int l = 0; l < 16; ++l) sum += lanes[l];
  return sum;
}

// sum_i a[i] b[i] in double as kDoubleLanes partial sums (lane j takes i = j mod kDoubleLanes)
// added in lane order at the end: a loop that vectorises, where one running double sum is a
// chain of dependent adds (~4 cycles per element). The order differs from the single sum's by
// rounding in the double's last bits only.
inline constexpr int kDoubleLanes = 8;
__attribute__((always_inline)) inline double DotInDouble(const float* a, const float* b,
                                                         int64_t n) {
  double lanes[kDoubleLanes] = {};
  int64_t i = 0;
  for (; i + kDoubleLanes <= n; i += kDoubleLanes) {
    for (int j = 0; j < kDoubleLanes; ++j) lanes[j] += static_cast<double>(a[i + j]) * b[i + j];
  }
  for (int j = 0; i < n; ++i, ++j) lanes[j] += static_cast<double>(a[i]) * b[i];
  double sum = 0.0;
  for (int j = 0; j < kDoubleLanes; ++j) sum += lanes[j];
  return sum;
}

// y[i] += a * x[i].
__attribute__((always_inline)) inline void Axpy(float a, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// A bfloat16 value (the high half of a float32) widened: a shift, which GCC vectorises.
__attribute__((always_inline)) inline float Bf16Value(uint16_t bits) {
  return std::bit_cast<float>(uint32_t{bits} << 16);
}

}  // namespace k3::kernels
