// RMSNorm (plain and sigmoid-gated), L2 normalisation and the residual add. The squared sums
// accumulate in double (DotInDouble's lanes); the rest is float32 in the order written.
#include <algorithm>
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

// Work per element of a row, for ForRanges: a double square sum, a scale and a store; the gated
// form adds a sigmoid (an exponential and a division).
constexpr int64_t kNormWork = 4, kGatedNormWork = 16;

void RmsNorm(const RmsNormShape& s, const float* x, const float* weight, float* out,
             base::ThreadPool* pool) {
  const int64_t x_stride = s.x_stride ? s.x_stride : s.dim;
  const int64_t out_stride = s.out_stride ? s.out_stride : s.dim;
  ForRanges(pool, s.rows, kNormWork * s.dim, [&](int64_t r0, int64_t r1, size_t) {
    for (int64_t r = r0; r < r1; ++r) {
      RmsNormVector(x + r * x_stride, weight, s.dim, s.eps, out + r * out_stride);
    }
  });
}

void GatedRmsNorm(const RmsNormShape& s, const float* x, const float* weight, const float* gate,
                  float* out, base::ThreadPool* pool) {
  const int64_t x_stride = s.x_stride ? s.x_stride : s.dim;
  const int64_t out_stride = s.out_stride ? s.out_stride : s.dim;
  ForRanges(pool, s.rows, kGatedNormWork * s.dim, [&](int64_t r0, int64_t r1, size_t) {
    for (int64_t r = r0; r < r1; ++r) {
      float* o = out + r * out_stride;
      RmsNormVector(x + r * x_stride, weight, s.dim, s.eps, o);
      const float* g = gate + r * x_stride;
      for (int64_t i = 0; i < s.dim; ++i) o[i] *= FastSigmoid(g[i]);
    }
  });
}

void L2Normalize(const L2NormShape& s, float* x) {
  for (int64_t v = 0; v < s.vectors; ++v) L2NormalizeVector(x + v * s.dim, s.dim, s.scale, s.eps);
}

void Add(float* x, const float* y, int64_t n, base::ThreadPool* pool) {
  // In pieces of 16 floats (a cache line when x is 64-byte aligned, as the arenas give), so tasks
  // do not share written lines; per float a load, an add and a store of x, a load of y.
  constexpr int64_t kPiece = 16;
  ForRanges(pool, (n + kPiece - 1) / kPiece, 4 * kPiece, [&](int64_t p0, int64_t p1, size_t) {
    const int64_t end = std::min(n, p1 * kPiece);
    for (int64_t i = p0 * kPiece; i < end; ++i) x[i] += y[i];
  });
}

}  // namespace k3::kernels::cpu
