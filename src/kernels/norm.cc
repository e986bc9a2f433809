// RMSNorm (plain and sigmoid-gated), L2 normalisation and the residual add. The squared sums
// accumulate in double (DotInDouble's lanes); the rest is float32 in the order written.
#include <cmath>

#include "kernels/cpu_ops.h"
#include "kernels/vector_math.h"
#include "kernels/vectorize.h"

namespace k3::kernels::cpu {
namespace {

// out[i] = x[i] * w[i] / sqrt(mean(x^2) + eps); w may be null. out may alias x.
K3_MULTIVERSION void RmsNormVector(const float* x, const float* w, int64_t n, float eps,
                                   float* out) {
  const double sum_sq = DotInDouble(x, x, n);
  const float inv = static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps));
  for (int64_t i = 0; i < n; ++i) out[i] = w ? x[i] * inv * w[i] : x[i] * inv;
}

// x *= scale / sqrt(|x|^2 + eps).
K3_MULTIVERSION void L2NormalizeVector(float* x, int64_t n, float scale, float eps) {
  const float inv = static_cast<float>(scale / std::sqrt(DotInDouble(x, x, n) + eps));
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
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
  for (int64_t v = 0; v < s.vectors; ++v) L2NormalizeVector(x + v * s.dim, s.dim, s.scale, s.eps);
}

void Add(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace k3::kernels::cpu
