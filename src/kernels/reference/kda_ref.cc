// KDA by definition: the gates, the short convolution and the delta rule one token at a time in
// double (the state is read from and written back to float32), whatever form is asked for.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reference/reference_backend.h"

namespace k3::kernels::reference {

void ReferenceBackend::KdaGates(const KdaGateArgs& a) {
  for (int64_t t = 0; t < a.rows; ++t) {
    for (int64_t h = 0; h < a.heads; ++h) {
      const double rate = std::exp(double{a.a_log[h]});
      for (int64_t i = 0; i < a.head_dim; ++i) {
        float& g = a.g[(t * a.heads + h) * a.head_dim + i];
        const double raw = double{g} + a.dt_bias[h * a.head_dim + i];
        g = static_cast<float>(a.kind == KdaGateKind::kLowerBound
                                   ? a.lower_bound * SigmoidRef(rate * raw)
                                   : -rate * std::log1p(std::exp(raw)));
      }
      float& beta = a.beta[t * a.heads + h];
      beta = static_cast<float>(SigmoidRef(beta));
    }
  }
}

void ReferenceBackend::ShortConv(const ShortConvArgs& a, std::span<const ConvSequence> seqs) {
  const int64_t keep = a.taps - 1, p = a.channels;
  for (const ConvSequence& s : seqs) {
    // ext = history ++ this sequence's rows, [keep + rows, channels].
    std::vector<double> ext((keep + s.rows) * p);
    for (int64_t i = 0; i < keep * p; ++i) ext[i] = s.history[i];
    for (int64_t i = 0; i < s.rows * p; ++i) ext[keep * p + i] = a.x[s.row_begin * p + i];
    for (int64_t t = 0; t < s.rows; ++t) {
      for (int64_t c = 0; c < p; ++c) {
        double acc = 0.0;
        for (int i = 0; i < a.taps; ++i) acc += a.weights[c * a.taps + i] * ext[(t + i) * p + c];
        a.out[(s.row_begin + t) * p + c] = static_cast<float>(SiluRef(acc));
      }
    }
    for (int64_t i = 0; i < keep * p; ++i) s.history[i] = static_cast<float>(ext[s.rows * p + i]);
  }
}

void ReferenceBackend::KdaDeltaRule(const KdaArgs& a, std::span<const KdaSequence> seqs,
                                    Workspace&) {
  const int64_t kd = a.key_dim, vd = a.value_dim, h = a.heads;
  std::vector<double> S(kd * vd), u(vd);
  for (const KdaSequence& s : seqs) {
    for (int64_t head = 0; head < h; ++head) {
      float* state = s.state + head * kd * vd;
      std::copy(state, state + kd * vd, S.begin());
      for (int64_t t = 0; t < s.rows; ++t) {
        const int64_t row = s.row_begin + t;
        const float* q = a.q + (row * h + head) * kd;
        const float* k = a.k + (row * h + head) * kd;
        const float* v = a.v + (row * h + head) * vd;
        const float* g = a.g + (row * h + head) * kd;
        const double beta = a.beta[row * h + head];
        for (int64_t i = 0; i < kd; ++i) {
          for (int64_t j = 0; j < vd; ++j) S[i * vd + j] *= std::exp(double{g[i]});
        }
        for (int64_t j = 0; j < vd; ++j) {
          double sk = 0.0;
          for (int64_t i = 0; i < kd; ++i) sk += S[i * vd + j] * k[i];
          u[j] = v[j] - sk;
        }
        for (int64_t i = 0; i < kd; ++i) {
          for (int64_t j = 0; j < vd; ++j) S[i * vd + j] += beta * k[i] * u[j];
        }
        float* o = a.o + (row * h + head) * vd;
        for (int64_t j = 0; j < vd; ++j) {
          double acc = 0.0;
          for (int64_t i = 0; i < kd; ++i) acc += S[i * vd + j] * q[i];
          o[j] = static_cast<float>(acc);
        }
      }
      for (int64_t i = 0; i < kd * vd; ++i) state[i] = static_cast<float>(S[i]);
    }
  }
}

}  // namespace k3::kernels::reference
