// Attention Residuals (spec/model.md §5.2): a softmax over depth of RMS-normalised sources scored
// by the site's folded vector, mixing the raw sources. Scores accumulate in double.
#include <cmath>

#include "base/arena.h"
#include "kernels/cpu_ops.h"

namespace k3::kernels::cpu {

void AttnResMix(const AttnResArgs& a, base::Arena& arena) {
  const int n = a.num_sources;
  const int64_t d = a.dim;
  base::ArenaMark mark(arena);
  float* p = arena.Allocate<float>(n);
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int i = 0; i < n; ++i) {
      const float* v = a.sources[i] + r * d;
      double sum_sq = 0.0, dot = 0.0;
      for (int64_t k = 0; k < d; ++k) {
        sum_sq += static_cast<double>(v[k]) * v[k];
        dot += static_cast<double>(v[k]) * a.score[k];
      }
      p[i] = static_cast<float>(dot / std::sqrt(sum_sq / static_cast<double>(d) + a.eps));
    }
    SoftmaxInPlace(p, n);
    float* o = a.out + r * d;
    for (int64_t k = 0; k < d; ++k) {
      float acc = 0.0f;
      for (int i = 0; i < n; ++i) acc += p[i] * a.sources[i][r * d + k];
      o[k] = acc;
    }
  }
}

}  // namespace k3::kernels::cpu
