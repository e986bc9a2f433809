// Norms, activations and the Attention Residuals mix, by definition in double.
#include <cmath>
#include <vector>

#include "kernels/reference/reference_backend.h"

namespace k3::kernels::reference {
namespace {

double ActivationRef(const ActivationShape& s, double x) {
  switch (s.kind) {
    case ActivationKind::kSilu:
      return SiluRef(x);
    case ActivationKind::kSitu:
      return s.situ_beta * std::tanh(x / s.situ_beta) * SigmoidRef(x);
    case ActivationKind::kGelu:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case ActivationKind::kSigmoid:
      return SigmoidRef(x);
  }
  return 0.0;
}

double RmsInverse(const float* x, int64_t n, double eps) {
  double sum_sq = 0.0;
  for (int64_t i = 0; i < n; ++i) sum_sq += static_cast<double>(x[i]) * x[i];
  return 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps);
}

}  // namespace

void ReferenceBackend::RmsNorm(const RmsNormShape& s, const float* x, const float* weight,
                               float* out) {
  const int64_t xs = s.x_stride ? s.x_stride : s.dim, os = s.out_stride ? s.out_stride : s.dim;
  for (int64_t r = 0; r < s.rows; ++r) {
    const double inv = RmsInverse(x + r * xs, s.dim, s.eps);
    for (int64_t i = 0; i < s.dim; ++i) {
      out[r * os + i] = static_cast<float>(x[r * xs + i] * inv * (weight ? weight[i] : 1.0));
    }
  }
}

void ReferenceBackend::GatedRmsNorm(const RmsNormShape& s, const float* x, const float* weight,
                                    const float* gate, float* out) {
  const int64_t xs = s.x_stride ? s.x_stride : s.dim, os = s.out_stride ? s.out_stride : s.dim;
  for (int64_t r = 0; r < s.rows; ++r) {
    const double inv = RmsInverse(x + r * xs, s.dim, s.eps);
    for (int64_t i = 0; i < s.dim; ++i) {
      const double normed = x[r * xs + i] * inv * (weight ? weight[i] : 1.0);
      out[r * os + i] = static_cast<float>(normed * SigmoidRef(gate[r * xs + i]));
    }
  }
}

void ReferenceBackend::L2Normalize(const L2NormShape& s, float* x) {
  for (int64_t v = 0; v < s.vectors; ++v) {
    float* xv = x + v * s.dim;
    double sum = 0.0;
    for (int64_t i = 0; i < s.dim; ++i) sum += static_cast<double>(xv[i]) * xv[i];
    const double factor = s.scale / std::sqrt(sum + s.eps);
    for (int64_t i = 0; i < s.dim; ++i) xv[i] = static_cast<float>(xv[i] * factor);
  }
}

void ReferenceBackend::Add(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(double{x[i]} + y[i]);
}

void ReferenceBackend::Activate(const ActivationShape& s, const float* x, float* out) {
  for (int64_t i = 0; i < s.n; ++i) out[i] = static_cast<float>(ActivationRef(s, x[i]));
}

void ReferenceBackend::Glu(const ActivationShape& s, const float* gate, const float* up,
                           float* out) {
  for (int64_t i = 0; i < s.n; ++i) {
    const double u = s.kind == ActivationKind::kSitu
                         ? s.situ_linear_beta * std::tanh(up[i] / s.situ_linear_beta)
                         : up[i];
    out[i] = static_cast<float>(ActivationRef(s, gate[i]) * u);
  }
}

void ReferenceBackend::SigmoidGate(float* x, const float* gate, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(x[i] * SigmoidRef(gate[i]));
}

void ReferenceBackend::AttnResMix(const AttnResArgs& a, Workspace&) {
  std::vector<double> p(a.num_sources);
  for (int64_t r = 0; r < a.rows; ++r) {
    double max = -INFINITY, sum = 0.0;
    for (int i = 0; i < a.num_sources; ++i) {
      const float* v = a.sources[i] + r * a.dim;
      double dot = 0.0;
      for (int64_t k = 0; k < a.dim; ++k) dot += static_cast<double>(v[k]) * a.score[k];
      p[i] = dot * RmsInverse(v, a.dim, a.eps);
      max = std::max(max, p[i]);
    }
    for (double& pi : p) sum += (pi = std::exp(pi - max));
    for (int64_t k = 0; k < a.dim; ++k) {
      double acc = 0.0;
      for (int i = 0; i < a.num_sources; ++i) acc += p[i] / sum * a.sources[i][r * a.dim + k];
      a.out[r * a.dim + k] = static_cast<float>(acc);
    }
  }
}

}  // namespace k3::kernels::reference
