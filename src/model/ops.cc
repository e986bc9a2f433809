#include "model/ops.h"

#include <algorithm>

#include "model/vectorize.h"

namespace k3::model {

void RmsNorm(const float* x, const float* w, int64_t n, float eps, float* out) {
  double sum_sq = 0.0;
  for (int64_t i = 0; i < n; ++i) sum_sq += static_cast<double>(x[i]) * x[i];
  const float inv = static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps));
  for (int64_t i = 0; i < n; ++i) out[i] = w ? x[i] * inv * w[i] : x[i] * inv;
}

void RmsNormRows(const float* x, const float* w, int64_t rows, int64_t n, float eps, float* out) {
  for (int64_t r = 0; r < rows; ++r) RmsNorm(x + r * n, w, n, eps, out + r * n);
}

K3_MULTIVERSION void SiluAndMul(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = Silu(gate[i]) * up[i];
}

K3_MULTIVERSION void SituAndMul(const float* gate, const float* up, int64_t n, float beta,
                                float linear_beta, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = beta * FastTanh(gate[i] / beta) * FastSigmoid(gate[i]);
    out[i] = g * (linear_beta * FastTanh(up[i] / linear_beta));
  }
}

K3_MULTIVERSION void Softmax(float* x, int64_t n) {
  const float max = *std::max_element(x, x + n);
  for (int64_t i = 0; i < n; ++i) x[i] = FastExp(x[i] - max);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void AddInPlace(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace k3::model
