// RMSNorm (plain and sigmoid-gated), L2 normalisation and the residual add. The squared sums
// accumulate in double; the rest is float32 in the order written (bit-identical to the loops the
// model ran before these moved here).
#include <cmath>

#include "kernels/cpu_ops.h"
#include "kernels/vector_math.h"

namespace k3::kernels::cpu {
namespace {

// out[i] = x[i] * w[i] / sqrt(mean(x^2) + eps); w may be null. out may alias x.
void RmsNormVector(const float* x, const float* w, int64_t n, float eps, float* out) {
  double sum_sq = 0.0;
  for (int64_t i = 0; i < n; ++i) sum_sq += static_cast<double>(x[i]) * x[i];
  const float inv = static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps));
  for (int64_t i = 0; i < n; ++i) out[i] = w ? x[i] * inv * w[i] : x[i] * inv;
}

}  // namespace

void RmsNorm(const RmsNormShape& s, const float* x, const float* weight, float* out) {
  const int64_t x_stride = s.x_stride ? s.x_stride : s.dim;
  const int64_t out_stride = s.out_stride ? s.out_stride : s.dim;
  for (int64_t r = 0; r < s.rows; ++r) {
    RmsNormVector(x + r * x_stride, weight, s.dim, s.eps, out + r * out_stride);
  }
}

void GatedRmsNorm(const RmsNormShape& s, const float* x, const float* weight, const float* gate,
                  float* out) {
  const int64_t x_stride = s.x_stride ? s.x_stride : s.dim;
  const int64_t out_stride = s.out_stride ? s.out_stride : s.dim;
  for (int64_t r = 0; r < s.rows; ++r) {
    float* o = out + r * out_stride;
    RmsNormVector(x + r * x_stride, weight, s.dim, s.eps, o);
    const float* g = gate + r * x_stride;
    for (int64_t i = 0; i < s.dim; ++i) o[i] *= FastSigmoid(g[i]);
  }
}

void L2Normalize(const L2NormShape& s, float* x) {
  for (int64_t v = 0; v < s.vectors; ++v) {
    float* xv = x + v * s.dim;
    double sum = 0.0;
    for (int64_t i = 0; i < s.dim; ++i) sum += static_cast<double>(xv[i]) * xv[i];
    const float inv = static_cast<float>(s.scale / std::sqrt(sum + s.eps));
    for (int64_t i = 0; i < s.dim; ++i) xv[i] *= inv;
  }
}

void Add(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace k3::kernels::cpu
