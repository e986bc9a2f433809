#include "model/kda_layer.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/matmul.h"
#include "model/kda_core.h"
#include "model/ops.h"
#include "model/vectorize.h"

namespace k3::model {
namespace {

// Causal depthwise convolution over one sequence's rows of `raw` ([rows, p] at stride p) with
// `history` ([taps - 1, p], oldest first), then SiLU; history is advanced to the newest inputs.
K3_MULTIVERSION void ShortConv(const float* raw, int64_t rows, int64_t p,
                               const std::vector<float>& taps_w, int taps, float* history,
                               float* out) {
  const int64_t keep = taps - 1;
  std::vector<float> ext((keep + rows) * p);
  std::memcpy(ext.data(), history, keep * p * sizeof(float));
  std::memcpy(ext.data() + keep * p, raw, rows * p * sizeof(float));
  for (int64_t t = 0; t < rows; ++t) {
    float* y = out + t * p;
    for (int64_t c = 0; c < p; ++c) {
      float acc = 0.0f;
      for (int i = 0; i < taps; ++i) acc += taps_w[c * taps + i] * ext[(t + i) * p + c];
      y[c] = Silu(acc);
    }
  }
  std::memcpy(history, ext.data() + rows * p, keep * p * sizeof(float));
}

void L2NormInPlace(float* x, int n, float scale) {
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float inv = static_cast<float>(scale / std::sqrt(sum + 1e-6));  // FLA: x*rsqrt(sum+1e-6)
  for (int i = 0; i < n; ++i) x[i] *= inv;
}

struct Projections {
  std::vector<float> q, k, v, g, beta, gate;
};

Projections Project(const ModelConfig& c, const KdaWeights& w, const float* x, int64_t rows,
                    base::ThreadPool* pool) {
  const int64_t p = c.kda.projection_dim(), kd = c.kda.head_dim, h = c.kda.num_heads;
  Projections pr;
  pr.q.resize(rows * p);
  pr.k.resize(rows * p);
  pr.v.resize(rows * p);
  pr.g.resize(rows * p);
  pr.beta.resize(rows * h);
  pr.gate.resize(rows * p);
  std::vector<float> low(rows * kd);
  kernels::MatMul(x, rows, w.q, pr.q.data(), pool);
  kernels::MatMul(x, rows, w.k, pr.k.data(), pool);
  kernels::MatMul(x, rows, w.v, pr.v.data(), pool);
  kernels::MatMul(x, rows, w.f_a, low.data(), pool);
  kernels::MatMul(low.data(), rows, w.f_b, pr.g.data(), pool);
  kernels::MatMul(x, rows, w.beta, pr.beta.data(), pool);
  if (c.kda.full_rank_output_gate) {
    kernels::MatMul(x, rows, w.g, pr.gate.data(), pool);
  } else {
    kernels::MatMul(x, rows, w.g_a, low.data(), pool);
    kernels::MatMul(low.data(), rows, w.g_b, pr.gate.data(), pool);
  }
  return pr;
}

// Turns raw gate projections into log decays (spec §2.2) and beta logits into beta, in place.
K3_MULTIVERSION void Gates(const ModelConfig& c, const KdaWeights& w, int64_t rows,
                           Projections& pr) {
  const int64_t h = c.kda.num_heads, kd = c.kda.head_dim, p = h * kd;
  for (int64_t t = 0; t < rows; ++t) {
    for (int64_t head = 0; head < h; ++head) {
      const float a = std::exp(w.a_log[head]);
      float* g = &pr.g[t * p + head * kd];
      const float* bias = &w.dt_bias[head * kd];
      for (int64_t i = 0; i < kd; ++i) {
        const float raw = g[i] + bias[i];
        g[i] =
            c.kda.lower_bound_gate ? c.kda.gate_lower_bound * Sigmoid(a * raw) : -a * Softplus(raw);
      }
      pr.beta[t * h + head] = Sigmoid(pr.beta[t * h + head]);
    }
  }
}

}  // namespace

void KdaForward(const ModelConfig& c, const KdaWeights& w, int kda_layer, const float* x,
                std::span<const SequenceRows> seqs, const ForwardOptions& options,
                KdaStatePool& states, base::ThreadPool* pool, float* out) {
  const int64_t h = c.kda.num_heads, kd = c.kda.head_dim, p = h * kd, taps = c.kda.conv_kernel;
  int64_t rows = 0;
  for (const SequenceRows& s : seqs) rows += s.rows;
  Projections pr = Project(c, w, x, rows, pool);
  Gates(c, w, rows, pr);
  std::vector<float> q(rows * p), k(rows * p), v(rows * p), o(rows * p);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kd));
  for (const SequenceRows& s : seqs) {
    if (s.start_position == 0) states.ResetLayer(s.state_slot, kda_layer);
    float* hist = states.conv_state(s.state_slot, kda_layer);
    const int64_t off = s.row_begin * p;
    ShortConv(&pr.q[off], s.rows, p, w.q_conv, taps, hist, &q[off]);
    ShortConv(&pr.k[off], s.rows, p, w.k_conv, taps, hist + (taps - 1) * p, &k[off]);
    ShortConv(&pr.v[off], s.rows, p, w.v_conv, taps, hist + 2 * (taps - 1) * p, &v[off]);
  }
  for (int64_t t = 0; t < rows; ++t) {
    for (int64_t head = 0; head < h; ++head) {
      L2NormInPlace(&q[t * p + head * kd], kd, scale);
      L2NormInPlace(&k[t * p + head * kd], kd, 1.0f);
    }
  }
  // The recurrence: independent per (sequence, head).
  const bool chunked_default = options.kda_mode == KdaMode::kChunked;
  auto run = [&](size_t task) {
    const SequenceRows& s = seqs[task / h];
    const int64_t head = task % h;
    float* state = states.recurrent_state(s.state_slot, kda_layer) + head * kd * kd;
    const int64_t base = s.row_begin * p + head * kd;
    const bool chunked =
        chunked_default || (options.kda_mode == KdaMode::kAuto && s.rows >= options.kda_chunk);
    if (chunked) {
      KdaChunkInput in{&q[base], &k[base], &v[base], &pr.g[base], &pr.beta[s.row_begin * h + head],
                       p,        h,        s.rows};
      KdaChunked(in, kd, kd, options.kda_chunk, state, &o[base]);
      return;
    }
    for (int64_t t = 0; t < s.rows; ++t) {
      const int64_t r = base + t * p;
      KdaRecurrentStep(&q[r], &k[r], &v[r], &pr.g[r], pr.beta[(s.row_begin + t) * h + head], kd, kd,
                       state, &o[r]);
    }
  };
  if (pool) {
    pool->ParallelFor(seqs.size() * h, run);
  } else {
    for (size_t i = 0; i < seqs.size() * h; ++i) run(i);
  }
  // Gated per-head RMSNorm: o = RMSNorm(o) * o_norm * sigmoid(gate).
  for (int64_t t = 0; t < rows; ++t) {
    for (int64_t head = 0; head < h; ++head) {
      float* oh = &o[t * p + head * kd];
      RmsNorm(oh, w.o_norm.data(), kd, c.rms_eps, oh);
      const float* gh = &pr.gate[t * p + head * kd];
      for (int64_t i = 0; i < kd; ++i) oh[i] *= Sigmoid(gh[i]);
    }
  }
  kernels::MatMul(o.data(), rows, w.o, out, pool);
}

}  // namespace k3::model
