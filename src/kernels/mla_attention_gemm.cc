// The naive MLA form as two matrix products per head (long prefills): S = Q_h K_h^T over all
// cached positions, a causal softmax per row, then O_h = P V_h. Twice the multiply-adds of a
// causal loop, but on the GEMM kernels, which run several times faster than per-pair dot products.
#include <algorithm>
#include <cstring>

#include "base/arena.h"
#include "kernels/cpu_ops.h"

namespace k3::kernels::cpu {

void MlaAttendNaiveGemm(const MlaAttentionArgs& a, const PagedSequence& seq, const float* kv,
                        const float* const* entries, base::ThreadPool* pool, base::Arena& scratch) {
  const MlaShape& d = a.shape;
  const int64_t h = d.heads, dn = d.nope_dim, dr = d.rope_dim, dv = d.value_dim;
  const int64_t r = d.latent_dim, qk = d.qk_dim(), rows = seq.rows, start = seq.start_position;
  const int64_t len = start + rows;
  const float* q = a.q + seq.row_begin * h * qk;
  float* out = a.out + seq.row_begin * h * dv;
  base::ArenaMark mark(scratch);
  float* qh = scratch.Allocate<float>(rows * qk);  // [rows, qk]
  float* kh = scratch.Allocate<float>(len * qk);   // [len, qk]
  float* vt = scratch.Allocate<float>(dv * len);   // [dv, len]
  float* s = scratch.Allocate<float>(rows * len);  // [rows, len]
  float* oh = scratch.Allocate<float>(rows * dv);  // [rows, dv]
  for (int64_t head = 0; head < h; ++head) {
    for (int64_t t = 0; t < rows; ++t) {
      std::memcpy(qh + t * qk, q + t * h * qk + head * qk, qk * sizeof(float));
    }
    for (int64_t j = 0; j < len; ++j) {
      const float* e = kv + j * h * (dn + dv) + head * (dn + dv);
      std::memcpy(kh + j * qk, e, dn * sizeof(float));
      std::memcpy(kh + j * qk + dn, entries[j] + r, dr * sizeof(float));
      for (int64_t v = 0; v < dv; ++v) vt[v * len + j] = e[dn + v];
    }
    WeightMatrix keys{WeightFormat::kF32, len, qk, kh};
    MatMul(qh, rows, keys, s, pool, &scratch);
    for (int64_t t = 0; t < rows; ++t) {
      float* row = s + t * len;
      const int64_t visible = start + t + 1;
      for (int64_t j = 0; j < visible; ++j) row[j] *= d.scale;
      SoftmaxInPlace(row, visible);
      std::fill(row + visible, row + len, 0.0f);
    }
    WeightMatrix values{WeightFormat::kF32, dv, len, vt};
    MatMul(s, rows, values, oh, pool, &scratch);
    for (int64_t t = 0; t < rows; ++t) {
      std::memcpy(out + t * h * dv + head * dv, oh + t * dv, dv * sizeof(float));
    }
  }
}

}  // namespace k3::kernels::cpu
