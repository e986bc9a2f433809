// Small per-row float32 operations the layers share. Exact-precision path: float32 storage with
// float32 or double accumulation where a long sum would otherwise lose bits.
#pragma once

#include <cmath>
#include <cstdint>

#include "model/vector_math.h"

namespace k3::model {

inline float Sigmoid(float x) { return FastSigmoid(x); }
inline float Silu(float x) { return FastSilu(x); }
// log(1 + e^x) without overflow.
inline float Softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

// out[i] = x[i] * w[i] / sqrt(mean(x^2) + eps); w may be null (no weight). out may alias x.
void RmsNorm(const float* x, const float* w, int64_t n, float eps, float* out);
// Rows of [rows, n].
void RmsNormRows(const float* x, const float* w, int64_t rows, int64_t n, float eps, float* out);

// Gated-linear-unit activations over `n` pairs: out[i] = act(gate[i]) * up[i] (SiLU) or SiTU:
// [beta*tanh(g/beta)*sigmoid(g)] * [beta_lin*tanh(u/beta_lin)] (spec/model.md §4.3).
void SiluAndMul(const float* gate, const float* up, int64_t n, float* out);
void SituAndMul(const float* gate, const float* up, int64_t n, float beta, float linear_beta,
                float* out);

// In-place softmax over n values.
void Softmax(float* x, int64_t n);

// x[i] += y[i].
void AddInPlace(float* x, const float* y, int64_t n);

}  // namespace k3::model
