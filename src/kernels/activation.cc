// Elementwise activations, gated linear units, the sigmoid output gate and the in-place softmax
// the attention kernels share. exp, sigmoid and tanh are vector_math.h's (vectorisable, a few
// ulp); GELU uses libm's erf.
#include <algorithm>
#include <cmath>

#include "kernels/cpu_ops.h"
#include "kernels/vector_math.h"
#include "kernels/vectorize.h"

namespace k3::kernels::cpu {
namespace {

float Gelu(float x) {
  return static_cast<float>(0.5 * x * (1.0 + std::erf(x * 0.70710678118654752440)));
}

K3_MULTIVERSION void SiluAndMul(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = FastSilu(gate[i]) * up[i];
}

// [beta*tanh(g/beta)*sigmoid(g)] * [beta_lin*tanh(u/beta_lin)] (spec/model.md §4.3).
K3_MULTIVERSION void SituAndMul(const float* gate, const float* up, int64_t n, float beta,
                                float linear_beta, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = beta * FastTanh(gate[i] / beta) * FastSigmoid(gate[i]);
    out[i] = g * (linear_beta * FastTanh(up[i] / linear_beta));
  }
}

K3_MULTIVERSION void SiluRow(const float* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = FastSilu(x[i]);
}

K3_MULTIVERSION void SituRow(const float* x, int64_t n, float beta, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = beta * FastTanh(x[i] / beta) * FastSigmoid(x[i]);
}

K3_MULTIVERSION void SigmoidRow(const float* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = FastSigmoid(x[i]);
}

}  // namespace

void Activate(const ActivationShape& s, const float* x, float* out) {
  switch (s.kind) {
    case ActivationKind::kSilu:
      return SiluRow(x, s.n, out);
    case ActivationKind::kSitu:
      return SituRow(x, s.n, s.situ_beta, out);
    case ActivationKind::kGelu:
      for (int64_t i = 0; i < s.n; ++i) out[i] = Gelu(x[i]);
      return;
    case ActivationKind::kSigmoid:
      return SigmoidRow(x, s.n, out);
  }
}

void Glu(const ActivationShape& s, const float* gate, const float* up, float* out) {
  switch (s.kind) {
    case ActivationKind::kSilu:
      return SiluAndMul(gate, up, s.n, out);
    case ActivationKind::kSitu:
      return SituAndMul(gate, up, s.n, s.situ_beta, s.situ_linear_beta, out);
    case ActivationKind::kGelu:
      for (int64_t i = 0; i < s.n; ++i) out[i] = Gelu(gate[i]) * up[i];
      return;
    case ActivationKind::kSigmoid:
      for (int64_t i = 0; i < s.n; ++i) out[i] = FastSigmoid(gate[i]) * up[i];
      return;
  }
}

void SigmoidGate(float* x, const float* gate, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= FastSigmoid(gate[i]);
}

K3_MULTIVERSION void SoftmaxInPlace(float* x, int64_t n) {
  const float max = *std::max_element(x, x + n);
  for (int64_t i = 0; i < n; ++i) x[i] = FastExp(x[i] - max);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace k3::kernels::cpu
