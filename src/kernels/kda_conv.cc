// The pieces of a KDA layer around the delta rule: the short causal convolutions with their
// rolling history, and the decay and beta gates (spec/model.md §2.2).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/check.h"
#include "kernels/cpu_ops.h"
#include "kernels/vector_math.h"
#include "kernels/vectorize.h"

namespace k3::kernels::cpu {
namespace {

constexpr int kMaxTaps = 16;

// log(1 + e^x) without overflow.
float Softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

// One sequence: out[t, c] = silu(sum_i w[c, i] ext[t + i, c]) with ext = history ++ x (rows of
// `channels` floats). The history is advanced to the newest taps - 1 inputs afterwards.
K3_MULTIVERSION void ConvSequenceRows(const float* x, int64_t rows, int64_t p, const float* taps_w,
                                      int taps, float* history, float* out) {
  const int64_t keep = taps - 1;
  for (int64_t t = 0; t < rows; ++t) {
    const float* src[kMaxTaps];
    for (int i = 0; i < taps; ++i) {
      src[i] = t + i < keep ? history + (t + i) * p : x + (t + i - keep) * p;
    }
    float* y = out + t * p;
    for (int64_t c = 0; c < p; ++c) {
      float acc = 0.0f;
      for (int i = 0; i < taps; ++i) acc += taps_w[c * taps + i] * src[i][c];
      y[c] = FastSilu(acc);
    }
  }
  if (rows >= keep) {
    std::memcpy(history, x + (rows - keep) * p, keep * p * sizeof(float));
  } else {
    std::memmove(history, history + rows * p, (keep - rows) * p * sizeof(float));
    std::memcpy(history + (keep - rows) * p, x, rows * p * sizeof(float));
  }
}

K3_MULTIVERSION void GateRows(const KdaGateArgs& a) {
  const int64_t h = a.heads, kd = a.head_dim, p = h * kd;
  const bool lower_bound = a.kind == KdaGateKind::kLowerBound;
  for (int64_t t = 0; t < a.rows; ++t) {
    for (int64_t head = 0; head < h; ++head) {
      const float decay_rate = std::exp(a.a_log[head]);
      float* g = a.g + t * p + head * kd;
      const float* bias = a.dt_bias + head * kd;
      for (int64_t i = 0; i < kd; ++i) {
        const float raw = g[i] + bias[i];
        g[i] = lower_bound ? a.lower_bound * FastSigmoid(decay_rate * raw)
                           : -decay_rate * Softplus(raw);
      }
      a.beta[t * h + head] = FastSigmoid(a.beta[t * h + head]);
    }
  }
}

}  // namespace

void ShortConv(const ShortConvArgs& a, std::span<const ConvSequence> seqs) {
  K3_CHECK(a.taps >= 1 && a.taps <= kMaxTaps) << "conv taps " << a.taps;
  for (const ConvSequence& s : seqs) {
    const int64_t offset = s.row_begin * a.channels;
    ConvSequenceRows(a.x + offset, s.rows, a.channels, a.weights, a.taps, s.history,
                     a.out + offset);
  }
}

void KdaGates(const KdaGateArgs& args) { GateRows(args); }

}  // namespace k3::kernels::cpu
