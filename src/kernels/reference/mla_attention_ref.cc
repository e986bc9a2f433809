// MLA by definition, whatever the form asked for: every cached latent is expanded into per-head
// keys and values with kv_b (dequantised by definition), scores in double, softmax in double.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/matmul_detail.h"
#include "kernels/reference/reference_backend.h"

namespace k3::kernels::reference {
namespace {

// Keys and values of one head at every position: [len, nope] and [len, value].
void ExpandHead(const MlaAttentionArgs& a, const PagedSequence& s, int64_t len, int64_t head,
                std::vector<double>& keys, std::vector<double>& values) {
  const MlaShape& d = a.shape;
  std::vector<float> row(d.latent_dim);
  keys.assign(len * d.nope_dim, 0.0);
  values.assign(len * d.value_dim, 0.0);
  for (int64_t j = 0; j < len; ++j) {
    const float* latent = a.cache.entry(s.pages[j / a.cache.page_size], j % a.cache.page_size);
    for (int64_t c = 0; c < d.nope_dim + d.value_dim; ++c) {
      detail::DequantizeByDefinition(*a.kv_b, head * (d.nope_dim + d.value_dim) + c, row.data());
      double acc = 0.0;
      for (int64_t k = 0; k < d.latent_dim; ++k) acc += static_cast<double>(row[k]) * latent[k];
      if (c < d.nope_dim) {
        keys[j * d.nope_dim + c] = acc;
      } else {
        values[j * d.value_dim + c - d.nope_dim] = acc;
      }
    }
  }
}

}  // namespace

void ReferenceBackend::WriteLatentCache(const LatentCacheView& cache,
                                        std::span<const PagedSequence> seqs, const float* entries) {
  for (const PagedSequence& s : seqs) {
    for (int64_t t = 0; t < s.rows; ++t) {
      const int64_t pos = s.start_position + t;
      float* dst = cache.entry(s.pages[pos / cache.page_size], pos % cache.page_size);
      for (int64_t c = 0; c < cache.entry_dim; ++c) {
        dst[c] = entries[(s.row_begin + t) * cache.entry_dim + c];
      }
    }
  }
}

void ReferenceBackend::MlaAttention(const MlaAttentionArgs& a, std::span<const MlaSequence> seqs,
                                    Workspace&) {
  const MlaShape& d = a.shape;
  std::vector<double> keys, values, p;
  for (const MlaSequence& ms : seqs) {
    const PagedSequence& s = ms.seq;
    const int64_t len = s.start_position + s.rows;
    for (int64_t head = 0; head < d.heads; ++head) {
      ExpandHead(a, s, len, head, keys, values);
      for (int64_t t = 0; t < s.rows; ++t) {
        const float* q = a.q + ((s.row_begin + t) * d.heads + head) * d.qk_dim();
        const int64_t visible = s.start_position + t + 1;
        p.assign(visible, 0.0);
        double max = -INFINITY;
        for (int64_t j = 0; j < visible; ++j) {
          const float* k_pe =
              a.cache.entry(s.pages[j / a.cache.page_size], j % a.cache.page_size) + d.latent_dim;
          double dot = 0.0;
          for (int64_t c = 0; c < d.nope_dim; ++c) dot += q[c] * keys[j * d.nope_dim + c];
          for (int64_t c = 0; c < d.rope_dim; ++c) dot += double{q[d.nope_dim + c]} * k_pe[c];
          p[j] = dot * d.scale;
          max = std::max(max, p[j]);
        }
        double sum = 0.0;
        for (double& pj : p) sum += (pj = std::exp(pj - max));
        float* out = a.out + ((s.row_begin + t) * d.heads + head) * d.value_dim;
        for (int64_t v = 0; v < d.value_dim; ++v) {
          double acc = 0.0;
          for (int64_t j = 0; j < visible; ++j) acc += p[j] / sum * values[j * d.value_dim + v];
          out[v] = static_cast<float>(acc);
        }
      }
    }
  }
}

}  // namespace k3::kernels::reference
