// Attention Residuals (spec/model.md §5.2): a softmax over depth of RMS-normalised sources scored
// by the site's folded vector, mixing the raw sources. Scores accumulate in double.
#include <cmath>

#include "base/arena.h"
#include "kernels/cpu_ops.h"
#include "kernels/vectorize.h"

namespace k3::kernels::cpu {
namespace {

// The site's score of one source row: (v . score) / rms(v), both sums DotInDouble's (a single
// running double sum per score does not vectorise: 1.5 % of a K3 batch-32 decode step).
K3_MULTIVERSION float SourceScore(const float* v, const float* score, int64_t d, float eps) {
  const double sum_sq = DotInDouble(v, v, d), dot = DotInDouble(v, score, d);
  return static_cast<float>(dot / std::sqrt(sum_sq / static_cast<double>(d) + eps));
}

// o = sum_i p[i] sources[i] from 0, source by source in order i = 0, 1, ... for every column (o
// overlaps no source: AttnResArgs).
K3_MULTIVERSION void MixRow(const float* const* sources, const float* p, int n, int64_t offset,
                            int64_t d, float* __restrict o) {
  for (int64_t k = 0; k < d; ++k) o[k] = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float* __restrict s = sources[i] + offset;
    const float w = p[i];
    for (int64_t k = 0; k < d; ++k) o[k] += w * s[k];
  }
}

}  // namespace

void AttnResMix(const AttnResArgs& a, base::ThreadPool* pool, Workspace& ws) {
  const int n = a.num_sources;
  const int64_t d = a.dim;
  // Per row and source: two double dot products over d and one multiply-add into the mix.
  ForRanges(pool, a.rows, 3 * n * d, [&](int64_t r0, int64_t r1, size_t slot) {
    base::Arena& arena = ws.slot(slot);
    base::ArenaMark mark(arena);
    float* p = arena.Allocate<float>(n);
    for (int64_t r = r0; r < r1; ++r) {
      for (int i = 0; i < n; ++i) p[i] = SourceScore(a.sources[i] + r * d, a.score, d, a.eps);
      SoftmaxInPlace(p, n);
      MixRow(a.sources, p, n, r * d, d, a.out + r * d);
    }
  });
}

}  // namespace k3::kernels::cpu
