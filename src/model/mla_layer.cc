#include "model/mla_layer.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/matmul.h"
#include "model/ops.h"
#include "model/vectorize.h"

namespace k3::model {
namespace {

struct Dims {
  int64_t h, dn, dr, dv, r, qk, entry;
};

Dims DimsOf(const MlaConfig& m) {
  return {m.num_heads,    m.qk_nope_dim, m.qk_rope_dim, m.v_head_dim,
          m.kv_lora_rank, m.qk_dim(),    m.cache_dim()};
}

float* CacheEntry(MlaCache& cache, const SequenceRows& s, int64_t position, int layer) {
  const int page = s.pages[position / cache.page_size()];
  return cache.entry(page, static_cast<int>(position % cache.page_size()), layer);
}

// Naive form for one (sequence, head): keys/values expanded from the latents in `kv` [L, H(dn+dv)].
K3_MULTIVERSION void AttendNaive(const Dims& d, const float* q, const float* kv,
                                 const float* entries, int64_t start, int64_t rows, int64_t head,
                                 float scale, float* out) {
  std::vector<float> p(start + rows);
  for (int64_t t = 0; t < rows; ++t) {
    const float* qh = q + t * d.h * d.qk + head * d.qk;
    const int64_t len = start + t + 1;
    for (int64_t j = 0; j < len; ++j) {
      const float* k_nope = kv + j * d.h * (d.dn + d.dv) + head * (d.dn + d.dv);
      const float* k_pe = entries + j * d.entry + d.r;
      p[j] = (Dot(qh, k_nope, d.dn) + Dot(qh + d.dn, k_pe, d.dr)) * scale;
    }
    Softmax(p.data(), len);
    float* o = out + t * d.h * d.dv + head * d.dv;
    std::memset(o, 0, d.dv * sizeof(float));
    for (int64_t j = 0; j < len; ++j) {
      Axpy(p[j], kv + j * d.h * (d.dn + d.dv) + head * (d.dn + d.dv) + d.dn, o, d.dv);
    }
  }
}

// Absorbed form for one (sequence, head), reading only the cache entries.
K3_MULTIVERSION void AttendAbsorbed(const Dims& d, const std::vector<float>& kv_b, const float* q,
                                    const float* entries, int64_t start, int64_t rows, int64_t head,
                                    float scale, float* out) {
  const float* w_uk = kv_b.data() + head * (d.dn + d.dv) * d.r;  // [dn, r]
  const float* w_uv = w_uk + d.dn * d.r;                         // [dv, r]
  std::vector<float> q_latent(d.r), p(start + rows), mixed(d.r);
  for (int64_t t = 0; t < rows; ++t) {
    const float* qh = q + t * d.h * d.qk + head * d.qk;
    std::fill(q_latent.begin(), q_latent.end(), 0.0f);
    for (int64_t n = 0; n < d.dn; ++n) Axpy(qh[n], w_uk + n * d.r, q_latent.data(), d.r);
    const int64_t len = start + t + 1;
    for (int64_t j = 0; j < len; ++j) {
      const float* e = entries + j * d.entry;
      p[j] = (Dot(q_latent.data(), e, d.r) + Dot(qh + d.dn, e + d.r, d.dr)) * scale;
    }
    Softmax(p.data(), len);
    std::fill(mixed.begin(), mixed.end(), 0.0f);
    for (int64_t j = 0; j < len; ++j) {
      Axpy(p[j], entries + j * d.entry, mixed.data(), d.r);
    }
    float* o = out + t * d.h * d.dv + head * d.dv;
    for (int64_t v = 0; v < d.dv; ++v) o[v] = Dot(w_uv + v * d.r, mixed.data(), d.r);
  }
}

// The naive form as two matrix products per head (long prefills): S = Q_h K_h^T over all cached
// positions, a causal softmax per row, then O_h = P V_h. Twice the multiply-adds of a causal loop,
// but on the GEMM kernels, which run several times faster than the per-pair dot products.
void AttendNaiveGemm(const Dims& d, const float* q, const float* kv, const float* entries,
                     int64_t start, int64_t rows, float scale, base::ThreadPool* pool, float* out) {
  const int64_t len = start + rows;
  std::vector<float> qh(rows * d.qk), kh(len * d.qk), vt(d.dv * len), s(rows * len),
      oh(rows * d.dv);
  for (int64_t head = 0; head < d.h; ++head) {
    for (int64_t t = 0; t < rows; ++t) {
      std::memcpy(&qh[t * d.qk], q + t * d.h * d.qk + head * d.qk, d.qk * sizeof(float));
    }
    for (int64_t j = 0; j < len; ++j) {
      const float* e = kv + j * d.h * (d.dn + d.dv) + head * (d.dn + d.dv);
      std::memcpy(&kh[j * d.qk], e, d.dn * sizeof(float));
      std::memcpy(&kh[j * d.qk + d.dn], entries + j * d.entry + d.r, d.dr * sizeof(float));
      for (int64_t v = 0; v < d.dv; ++v) vt[v * len + j] = e[d.dn + v];
    }
    kernels::WeightMatrix keys{kernels::WeightFormat::kF32, len, d.qk, kh.data()};
    kernels::MatMul(qh.data(), rows, keys, s.data(), pool);
    for (int64_t t = 0; t < rows; ++t) {
      float* row = &s[t * len];
      const int64_t visible = start + t + 1;
      for (int64_t j = 0; j < visible; ++j) row[j] *= scale;
      Softmax(row, visible);
      std::fill(row + visible, row + len, 0.0f);
    }
    kernels::WeightMatrix values{kernels::WeightFormat::kF32, d.dv, len, vt.data()};
    kernels::MatMul(s.data(), rows, values, oh.data(), pool);
    for (int64_t t = 0; t < rows; ++t) {
      std::memcpy(out + t * d.h * d.dv + head * d.dv, &oh[t * d.dv], d.dv * sizeof(float));
    }
  }
}

}  // namespace

void MlaForward(const ModelConfig& c, const MlaWeights& w, int mla_layer, const Rope* rope,
                const float* x, std::span<const SequenceRows> seqs, const ForwardOptions& options,
                MlaCache& cache, base::ThreadPool* pool, float* out) {
  const MlaConfig& m = c.mla;
  const Dims d = DimsOf(m);
  int64_t rows = 0;
  for (const SequenceRows& s : seqs) rows += s.rows;
  std::vector<float> q(rows * d.h * d.qk), kv(rows * d.entry);
  if (m.q_lora_rank > 0) {
    std::vector<float> cq(rows * m.q_lora_rank);
    kernels::MatMul(x, rows, w.q_a, cq.data(), pool);
    RmsNormRows(cq.data(), w.q_a_norm.data(), rows, m.q_lora_rank, m.q_norm_eps, cq.data());
    kernels::MatMul(cq.data(), rows, w.q_b, q.data(), pool);
  } else {
    kernels::MatMul(x, rows, w.q, q.data(), pool);
  }
  kernels::MatMul(x, rows, w.kv_a, kv.data(), pool);
  for (const SequenceRows& s : seqs) {
    for (int64_t t = 0; t < s.rows; ++t) {
      const int64_t row = s.row_begin + t, position = s.start_position + t;
      float* e = &kv[row * d.entry];
      RmsNorm(e, w.kv_a_norm.data(), d.r, m.kv_norm_eps, e);
      if (rope) {
        rope->Apply(e + d.r, position);
        for (int64_t head = 0; head < d.h; ++head) {
          rope->Apply(&q[row * d.h * d.qk + head * d.qk + d.dn], position);
        }
      }
      std::memcpy(CacheEntry(cache, s, position, mla_layer), e, d.entry * sizeof(float));
    }
  }
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d.qk)) *
                                         (rope ? rope->softmax_scale_factor() : 1.0));
  std::vector<float> attn(rows * d.h * d.dv);
  for (const SequenceRows& s : seqs) {
    const int64_t len = s.start_position + s.rows;
    std::vector<float> entries(len * d.entry);
    for (int64_t j = 0; j < len; ++j) {
      std::memcpy(&entries[j * d.entry], CacheEntry(cache, s, j, mla_layer),
                  d.entry * sizeof(float));
    }
    const bool naive =
        options.mla_mode == MlaMode::kNaive || (options.mla_mode == MlaMode::kAuto && s.rows > 1);
    std::vector<float> expanded;
    if (naive) {
      std::vector<float> latents(len * d.r);
      for (int64_t j = 0; j < len; ++j) {
        std::memcpy(&latents[j * d.r], &entries[j * d.entry], d.r * sizeof(float));
      }
      expanded.resize(len * d.h * (d.dn + d.dv));
      kernels::MatMul(latents.data(), len, w.kv_b, expanded.data(), pool);
    }
    const float* qs = &q[s.row_begin * d.h * d.qk];
    float* os = &attn[s.row_begin * d.h * d.dv];
    if (naive && s.rows >= options.mla_gemm_rows) {
      AttendNaiveGemm(d, qs, expanded.data(), entries.data(), s.start_position, s.rows, scale, pool,
                      os);
      continue;
    }
    auto head_task = [&](size_t head) {
      if (naive) {
        AttendNaive(d, qs, expanded.data(), entries.data(), s.start_position, s.rows, head, scale,
                    os);
      } else {
        AttendAbsorbed(d, w.kv_b_f32, qs, entries.data(), s.start_position, s.rows, head, scale,
                       os);
      }
    };
    if (pool) {
      pool->ParallelFor(d.h, head_task);
    } else {
      for (int64_t head = 0; head < d.h; ++head) head_task(head);
    }
  }
  if (m.output_gate) {
    std::vector<float> gate(rows * d.h * d.dv);
    kernels::MatMul(x, rows, w.g, gate.data(), pool);
    for (size_t i = 0; i < gate.size(); ++i) attn[i] *= Sigmoid(gate[i]);
  }
  kernels::MatMul(attn.data(), rows, w.o, out, pool);
}

}  // namespace k3::model
