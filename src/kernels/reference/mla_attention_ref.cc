// MLA by definition, whatever the form asked for: every cached latent is expanded into per-head
// keys and values with kv_b (dequantised by definition), scores in double, softmax in double.
// Cache entries are encoded and decoded by the format definitions (tensor/numeric.h), scalar code
// independent of the CPU kernels' (latent_codec.cc), so conformance compares the kernels with
// this oracle on identical stored bytes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/matmul_detail.h"
#include "kernels/reference/reference_backend.h"
#include "tensor/numeric.h"

namespace k3::kernels::reference {

void EncodeLatentEntry(LatentDtype dtype, const float* e, int64_t dim, uint8_t* stored) {
  if (dtype == LatentDtype::kF32) {
    std::memcpy(stored, e, dim * sizeof(float));
  } else if (dtype == LatentDtype::kBf16) {
    for (int64_t c = 0; c < dim; ++c) {
      const uint16_t q = tensor::FloatToBf16(e[c]);
      std::memcpy(stored + 2 * c, &q, sizeof(q));
    }
  } else {
    float amax = 0.0f;
    for (int64_t c = 0; c < dim; ++c) amax = std::max(amax, std::fabs(e[c]));
    const float scale = amax / 448.0f;  // one scale per entry; zero codes when it underflows
    std::memcpy(stored, &scale, sizeof(scale));
    for (int64_t c = 0; c < dim; ++c) {
      stored[4 + c] = scale == 0.0f ? 0 : tensor::FloatToE4M3(e[c] / scale);
    }
  }
}

void DecodeLatentEntry(LatentDtype dtype, const uint8_t* stored, int64_t dim, float* e) {
  if (dtype == LatentDtype::kF32) {
    std::memcpy(e, stored, dim * sizeof(float));
  } else if (dtype == LatentDtype::kBf16) {
    for (int64_t c = 0; c < dim; ++c) {
      uint16_t q;
      std::memcpy(&q, stored + 2 * c, sizeof(q));
      e[c] = tensor::Bf16ToFloat(q);
    }
  } else {
    float scale;
    std::memcpy(&scale, stored, sizeof(scale));
    for (int64_t c = 0; c < dim; ++c) e[c] = scale * tensor::E4M3ToFloat(stored[4 + c]);
  }
}

namespace {

// Position j's entry, decoded.
std::vector<float> EntryAt(const LatentCacheView& cache, const PagedSequence& s, int64_t j) {
  std::vector<float> e(cache.entry_dim);
  DecodeLatentEntry(cache.dtype, cache.entry(s.pages[j / cache.page_size], j % cache.page_size),
                    cache.entry_dim, e.data());
  return e;
}

// Keys and values of one head at every position of the decoded entries: [len, nope] and
// [len, value].
void ExpandHead(const MlaAttentionArgs& a, const std::vector<std::vector<float>>& entries,
                int64_t head, std::vector<double>& keys, std::vector<double>& values) {
  const int64_t len = static_cast<int64_t>(entries.size());
  const MlaShape& d = a.shape;
  std::vector<float> row(d.latent_dim);
  keys.assign(len * d.nope_dim, 0.0);
  values.assign(len * d.value_dim, 0.0);
  for (int64_t j = 0; j < len; ++j) {
    const std::vector<float>& latent = entries[j];
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
      EncodeLatentEntry(cache.dtype, entries + (s.row_begin + t) * cache.entry_dim, cache.entry_dim,
                        cache.entry(s.pages[pos / cache.page_size], pos % cache.page_size));
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
    std::vector<std::vector<float>> entries;  // [len][entry_dim], decoded
    for (int64_t j = 0; j < len; ++j) entries.push_back(EntryAt(a.cache, s, j));
    for (int64_t head = 0; head < d.heads; ++head) {
      ExpandHead(a, entries, head, keys, values);
      for (int64_t t = 0; t < s.rows; ++t) {
        const float* q = a.q + ((s.row_begin + t) * d.heads + head) * d.qk_dim();
        const int64_t visible = s.start_position + t + 1;
        p.assign(visible, 0.0);
        double max = -INFINITY;
        for (int64_t j = 0; j < visible; ++j) {
          const float* k_pe = entries[j].data() + d.latent_dim;
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
