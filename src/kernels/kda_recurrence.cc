// The Kimi Delta Attention recurrence per head (spec/model.md §2.1, §2.4). The state S is [K][V]
// float32 and decays along the key channel: S[k][:] *= exp(g[k]). Outputs use the state after the
// token's update. Two forms with the same result: one recurrent step per token, and the chunked
// (WY) form over `chunk` tokens at a time. (sequence, head) pairs run in parallel, each taking its
// scratch from its Workspace slot.
#include <algorithm>
#include <cmath>

#include "base/arena.h"
#include "kernels/cpu_ops.h"
#include "kernels/vector_math.h"
#include "kernels/vectorize.h"

namespace k3::kernels::cpu {
namespace {

// One token: S <- diag(exp(g)) S;  S <- S + beta k (v - S^T k)^T;  o = S^T q. sk: [value_dim].
K3_MULTIVERSION
void RecurrentStep(const float* q, const float* k, const float* v, const float* g, float beta,
                   int key_dim, int value_dim, float* state, float* sk, float* o) {
  // Pass 1: decay each key row and accumulate S^T k. Pass 2: rank-1 update and S^T q.
  std::fill(sk, sk + value_dim, 0.0f);
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

// Tokens of one (sequence, head): token t of q starts at q + t * qk_stride (likewise k, g), of v
// and o at t * v_stride; beta[t * beta_stride].
struct HeadRows {
  const float* q;
  const float* k;
  const float* v;
  const float* g;
  const float* beta;
  float* o;
  int64_t qk_stride, v_stride, beta_stride;
};

// Scratch of OneChunk for n <= chunk tokens.
struct ChunkScratch {
  float *G, *kg, *vn, *A, *Aqk, *k_neg, *k_pos, *q_pos, *e;
};

ChunkScratch AllocateChunkScratch(base::Arena& arena, int64_t n, int kd, int vd) {
  ChunkScratch s;
  s.G = arena.Allocate<float>(n * kd);
  s.kg = arena.Allocate<float>(n * kd);
  s.vn = arena.Allocate<float>(n * vd);
  s.A = arena.Allocate<float>(n * n);
  s.Aqk = arena.Allocate<float>(n * n);
  s.k_neg = arena.Allocate<float>(n * kd);
  s.k_pos = arena.Allocate<float>(n * kd);
  s.q_pos = arena.Allocate<float>(n * kd);
  s.e = arena.Allocate<float>(kd);
  return s;
}

// One chunk of n <= chunk tokens starting at t0 (spec §2.4). G = inclusive cumulative log decay
// inside the chunk. Every exponent used is a difference G_r - G_i with i <= r, or G_n - G_r, or
// G_r: all <= 0, so nothing overflows whatever the gate parametrisation.
// k3-size: kernel body, the five phases share the chunk's buffers and indices; splitting them
// would pass the same nine arrays to each part.
K3_MULTIVERSION void OneChunk(const HeadRows& in, int64_t t0, int64_t n, int kd, int vd,
                              const ChunkScratch& s, float* state) {
  auto row = [&](const float* base, int64_t t) { return base + (t0 + t) * in.qk_stride; };
  auto vrow = [&](const float* base, int64_t t) { return base + (t0 + t) * in.v_stride; };
  float *G = s.G, *kg = s.kg, *vn = s.vn, *A = s.A, *Aqk = s.Aqk;
  std::fill(A, A + n * n, 0.0f);
  std::fill(Aqk, Aqk + n * n, 0.0f);
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
    float *k_neg = s.k_neg, *k_pos = s.k_pos, *q_pos = s.q_pos;
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
    float* e = s.e;
    for (int64_t r = 0; r < n; ++r) {
      const float* kr = row(in.k, r);
      const float* qr = row(in.q, r);
      const float beta_r = in.beta[(t0 + r) * in.beta_stride];
      for (int64_t i = 0; i <= r; ++i) {
        const float* ki = row(in.k, i);
        for (int a = 0; a < kd; ++a) e[a] = FastExp(G[r * kd + a] - G[i * kd + a]) * ki[a];
        if (i < r) A[r * n + i] = beta_r * Dot(kr, e, kd);
        Aqk[r * n + i] = Dot(qr, e, kd);
      }
    }
  }
  // Vn = (I + A)^-1 diag(beta) (V - (exp(G) * K) S), by forward substitution over rows.
  for (int64_t r = 0; r < n; ++r) {
    const float beta_r = in.beta[(t0 + r) * in.beta_stride];
    const float* vr = vrow(in.v, r);
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
    float* out = in.o + (t0 + r) * in.v_stride;
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

// One (sequence, head): all its tokens, chunked or step by step.
void RunHead(const KdaArgs& a, const KdaSequence& s, int64_t head, base::Arena& scratch) {
  const int kd = static_cast<int>(a.key_dim), vd = static_cast<int>(a.value_dim);
  const int64_t qk_stride = a.heads * a.key_dim, v_stride = a.heads * a.value_dim;
  const HeadRows in{a.q + s.row_begin * qk_stride + head * kd,
                    a.k + s.row_begin * qk_stride + head * kd,
                    a.v + s.row_begin * v_stride + head * vd,
                    a.g + s.row_begin * qk_stride + head * kd,
                    a.beta + s.row_begin * a.heads + head,
                    a.o + s.row_begin * v_stride + head * vd,
                    qk_stride,
                    v_stride,
                    a.heads};
  float* state = s.state + head * a.key_dim * a.value_dim;
  base::ArenaMark mark(scratch);
  if (s.chunked) {
    const int64_t chunk = std::min<int64_t>(a.chunk, s.rows);
    const ChunkScratch cs = AllocateChunkScratch(scratch, chunk, kd, vd);
    for (int64_t t0 = 0; t0 < s.rows; t0 += a.chunk) {
      OneChunk(in, t0, std::min<int64_t>(a.chunk, s.rows - t0), kd, vd, cs, state);
    }
    return;
  }
  float* sk = scratch.Allocate<float>(vd);
  for (int64_t t = 0; t < s.rows; ++t) {
    RecurrentStep(in.q + t * qk_stride, in.k + t * qk_stride, in.v + t * v_stride,
                  in.g + t * qk_stride, in.beta[t * a.heads], kd, vd, state, sk,
                  in.o + t * v_stride);
  }
}

}  // namespace

void KdaDeltaRule(const KdaArgs& args, std::span<const KdaSequence> seqs, base::ThreadPool* pool,
                  Workspace& ws) {
  const size_t tasks = seqs.size() * static_cast<size_t>(args.heads);
  auto run = [&](size_t task, size_t slot) {
    RunHead(args, seqs[task / args.heads], static_cast<int64_t>(task % args.heads), ws.slot(slot));
  };
  if (pool) {
    pool->ParallelForSlots(tasks, run);
  } else {
    for (size_t task = 0; task < tasks; ++task) run(task, 0);
  }
}

}  // namespace k3::kernels::cpu
