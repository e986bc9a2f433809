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

// out[c] = silu(sum_i w[c, i] src[i][c]) for one row; kTaps > 0 fixes the tap count (then the
// channel loop vectorises, the stride-kTaps weights read as interleaved groups), 0 takes `taps`.
// Each channel sums its taps in order i = 0, 1, ... either way.
template <int kTaps>
[[gnu::always_inline]] inline void ConvRow(const float* const* src, const float* taps_w, int taps,
                                           int64_t p, float* y) {
  const int n = kTaps > 0 ? kTaps : taps;
  for (int64_t c = 0; c < p; ++c) {
    float acc = 0.0f;
    for (int i = 0; i < n; ++i) acc += taps_w[c * n + i] * src[i][c];
    y[c] = FastSilu(acc);
  }
}

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
    if (taps == 4) {  // Kimi-Linear's and K3's short_conv_kernel_size
      ConvRow<4>(src, taps_w, taps, p, out + t * p);
    } else {
      ConvRow<0>(src, taps_w, taps, p, out + t * p);
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
      // Two loops, each of which vectorises (with libm's log1pf and expf the loop ran scalar;
      // vectorising it and the convolution gave Kimi-Linear 10-19 % at batch 32 and prefill).
      if (lower_bound) {
        for (int64_t i = 0; i < kd; ++i) {
          g[i] = a.lower_bound * FastSigmoid(decay_rate * (g[i] + bias[i]));
        }
      } else {
        for (int64_t i = 0; i < kd; ++i) g[i] = -decay_rate * FastSoftplus(g[i] + bias[i]);
      }
      a.beta[t * h + head] = FastSigmoid(a.beta[t * h + head]);
    }
  }
}

}  // namespace

void ShortConv(const ShortConvArgs& a, std::span<const ConvSequence> seqs, base::ThreadPool* pool) {
  K3_CHECK(a.taps >= 1 && a.taps <= kMaxTaps) << "conv taps " << a.taps;
  int64_t rows = 0;
  for (const ConvSequence& s : seqs) rows += s.rows;
  const int64_t n = static_cast<int64_t>(seqs.size());
  // Per output: the taps' multiply-adds and a SiLU (an exponential and a division, ~16).
  const int64_t work_per_seq = n > 0 ? rows * a.channels * (a.taps + 16) / n : 0;
  // Sequences are independent (each has its rows and its history).
  ForRanges(pool, n, work_per_seq, [&](int64_t s0, int64_t s1, size_t) {
    for (const ConvSequence& s : seqs.subspan(s0, s1 - s0)) {
      const int64_t offset = s.row_begin * a.channels;
      ConvSequenceRows(a.x + offset, s.rows, a.channels, a.weights, a.taps, s.history,
                       a.out + offset);
    }
  });
}

void KdaGates(const KdaGateArgs& args) { GateRows(args); }

}  // namespace k3::kernels::cpu
