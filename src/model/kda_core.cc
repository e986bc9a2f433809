#include "model/kda_core.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/vector_math.h"
#include "model/vectorize.h"

namespace k3::model {

K3_MULTIVERSION
void KdaRecurrentStep(const float* q, const float* k, const float* v, const float* g, float beta,
                      int key_dim, int value_dim, float* state, float* o) {
  // Pass 1: decay each key row and accumulate S^T k. Pass 2: rank-1 update and S^T q.
  thread_local std::vector<float> sk;
  sk.assign(value_dim, 0.0f);
  for (int a = 0; a < key_dim; ++a) {
    float* row = state + static_cast<int64_t>(a) * value_dim;
    const float decay = FastExp(g[a]);
    const float ka = k[a];
    for (int b = 0; b < value_dim; ++b) {
      row[b] *= decay;
      sk[b] += ka * row[b];
    }
  }
  for (int b = 0; b < value_dim; ++b) sk[b] = v[b] - sk[b];  // u = v - S^T k
  for (int b = 0; b < value_dim; ++b) o[b] = 0.0f;
  for (int a = 0; a < key_dim; ++a) {
    float* row = state + static_cast<int64_t>(a) * value_dim;
    const float bk = beta * k[a];
    const float qa = q[a];
    for (int b = 0; b < value_dim; ++b) {
      row[b] += bk * sk[b];
      o[b] += qa * row[b];
    }
  }
}

namespace {

// One chunk of n <= chunk tokens (spec §2.4). G = inclusive cumulative log decay inside the chunk.
// Every exponent used is a difference G_r - G_i with i <= r, or G_n - G_r, or G_r: all <= 0, so
// nothing overflows whatever the gate parametrisation.
K3_MULTIVERSION void OneChunk(const KdaChunkInput& in, int64_t t0, int64_t n, int kd, int vd,
                              float* state, float* o) {
  auto row = [&](const float* base, int64_t t) { return base + (t0 + t) * in.row_stride; };
  std::vector<float> G(n * kd), kg(n * kd), vn(n * vd), A(n * n, 0.0f), Aqk(n * n, 0.0f);
  for (int a = 0; a < kd; ++a) {
    float acc = 0.0f;
    for (int64_t t = 0; t < n; ++t) {
      acc += row(in.g, t)[a];
      G[t * kd + a] = acc;
    }
  }
  for (int64_t t = 0; t < n; ++t) {
    const float* kt = row(in.k, t);
    for (int a = 0; a < kd; ++a) kg[t * kd + a] = FastExp(G[t * kd + a]) * kt[a];
  }
  // A[r,i] = beta_r sum_d k_r exp(G_r - G_i) k_i (i < r);  Aqk[r,j] likewise with q_r, j <= r.
  // When the chunk's total decay stays above -80, exp(G_r - G_i) = exp(G_r) exp(-G_i) with both
  // factors inside float range (e^80 < 3.4e38, e^-80 > FLT_MIN): 2nK exps and plain dot products.
  // Otherwise every difference is exponentiated directly (n^2 K / 2 exps).
  float min_total = 0.0f;
  for (int a = 0; a < kd; ++a) min_total = std::min(min_total, G[(n - 1) * kd + a]);
  if (min_total >= -80.0f) {
    std::vector<float> k_neg(n * kd), k_pos(n * kd), q_pos(n * kd);
    for (int64_t t = 0; t < n; ++t) {
      const float* kt = row(in.k, t);
      const float* qt = row(in.q, t);
      for (int a = 0; a < kd; ++a) {
        const float up = FastExp(G[t * kd + a]);
        k_pos[t * kd + a] = kt[a] * up;
        q_pos[t * kd + a] = qt[a] * up;
        k_neg[t * kd + a] = kt[a] / up;
      }
    }
    for (int64_t r = 0; r < n; ++r) {
      const float beta_r = in.beta[(t0 + r) * in.beta_stride];
      for (int64_t i = 0; i <= r; ++i) {
        if (i < r) A[r * n + i] = beta_r * Dot(&k_pos[r * kd], &k_neg[i * kd], kd);
        Aqk[r * n + i] = Dot(&q_pos[r * kd], &k_neg[i * kd], kd);
      }
    }
  } else {
    std::vector<float> e(kd);
    for (int64_t r = 0; r < n; ++r) {
      const float* kr = row(in.k, r);
      const float* qr = row(in.q, r);
      const float beta_r = in.beta[(t0 + r) * in.beta_stride];
      for (int64_t i = 0; i <= r; ++i) {
        const float* ki = row(in.k, i);
        for (int a = 0; a < kd; ++a) e[a] = FastExp(G[r * kd + a] - G[i * kd + a]) * ki[a];
        if (i < r) A[r * n + i] = beta_r * Dot(kr, e.data(), kd);
        Aqk[r * n + i] = Dot(qr, e.data(), kd);
      }
    }
  }
  // Vn = (I + A)^-1 diag(beta) (V - (exp(G) * K) S), by forward substitution over rows.
  for (int64_t r = 0; r < n; ++r) {
    const float beta_r = in.beta[(t0 + r) * in.beta_stride];
    const float* vr = row(in.v, r);
    float* out = &vn[r * vd];
    for (int b = 0; b < vd; ++b) out[b] = vr[b];
    for (int a = 0; a < kd; ++a) {
      const float c = kg[r * kd + a];
      const float* srow = state + static_cast<int64_t>(a) * vd;
      for (int b = 0; b < vd; ++b) out[b] -= c * srow[b];
    }
    for (int b = 0; b < vd; ++b) out[b] *= beta_r;
    for (int64_t i = 0; i < r; ++i) {
      const float c = A[r * n + i];
      const float* prev = &vn[i * vd];
      for (int b = 0; b < vd; ++b) out[b] -= c * prev[b];
    }
  }
  // O = (Q * exp(G)) S + Aqk Vn, with the state at the chunk start.
  for (int64_t r = 0; r < n; ++r) {
    float* out = o + (t0 + r) * in.row_stride;
    const float* qr = row(in.q, r);
    for (int b = 0; b < vd; ++b) out[b] = 0.0f;
    for (int a = 0; a < kd; ++a) {
      const float c = qr[a] * FastExp(G[r * kd + a]);
      const float* srow = state + static_cast<int64_t>(a) * vd;
      for (int b = 0; b < vd; ++b) out[b] += c * srow[b];
    }
    for (int64_t j = 0; j <= r; ++j) {
      const float c = Aqk[r * n + j];
      const float* vj = &vn[j * vd];
      for (int b = 0; b < vd; ++b) out[b] += c * vj[b];
    }
  }
  // S' = diag(exp(G_n)) S + sum_r (exp(G_n - G_r) * k_r) Vn_r^T.
  const float* g_last = &G[(n - 1) * kd];
  for (int a = 0; a < kd; ++a) {
    float* srow = state + static_cast<int64_t>(a) * vd;
    const float decay = FastExp(g_last[a]);
    for (int b = 0; b < vd; ++b) srow[b] *= decay;
    for (int64_t r = 0; r < n; ++r) {
      const float c = FastExp(g_last[a] - G[r * kd + a]) * row(in.k, r)[a];
      const float* vr = &vn[r * vd];
      for (int b = 0; b < vd; ++b) srow[b] += c * vr[b];
    }
  }
}

}  // namespace

void KdaChunked(const KdaChunkInput& in, int key_dim, int value_dim, int chunk, float* state,
                float* o) {
  for (int64_t t0 = 0; t0 < in.tokens; t0 += chunk) {
    const int64_t n = std::min<int64_t>(chunk, in.tokens - t0);
    OneChunk(in, t0, n, key_dim, value_dim, state, o);
  }
}

}  // namespace k3::model
