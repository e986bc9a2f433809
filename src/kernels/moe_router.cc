// MoE routing (spec/model.md §4.1): sigmoid scores, a selection-only correction bias, grouped
// top-k, renormalisation and routed scaling. Rankings are a strict total order (score descending,
// then index ascending), which is what a stable sort by score produces, computed with
// partial_sort so nothing allocates.
#include <algorithm>
#include <limits>
#include <numeric>

#include "base/arena.h"
#include "kernels/cpu_ops.h"
#include "kernels/vector_math.h"

namespace k3::kernels::cpu {
namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// Indices [0, n) with the first `count` ranked by value descending, ties by index.
void RankFirst(const float* value, int n, int count, int* order) {
  std::iota(order, order + n, 0);
  std::partial_sort(order, order + count, order + n, [value](int a, int b) {
    return value[a] > value[b] || (value[a] == value[b] && a < b);
  });
}

struct RowScratch {
  float* biased;       // [experts]
  int* order;          // [experts]
  float* group_score;  // [groups]
  int* group_order;    // [groups]
};

// Masks (to -inf) the experts of every group outside the best topk_groups, groups ranked by the
// sum of their two best biased scores.
void MaskGroups(const MoeRouteArgs& a, const RowScratch& s) {
  const int per_group = a.num_experts / a.num_groups;
  for (int g = 0; g < a.num_groups; ++g) {
    const float* members = s.biased + g * per_group;
    float best = kMinusInf, second = kMinusInf;
    for (int i = 0; i < per_group; ++i) {
      if (members[i] > best) {
        second = best;
        best = members[i];
      } else if (members[i] > second) {
        second = members[i];
      }
    }
    s.group_score[g] = best + (per_group > 1 ? second : 0.0f);
  }
  RankFirst(s.group_score, a.num_groups, a.topk_groups, s.group_order);
  for (int rank = a.topk_groups; rank < a.num_groups; ++rank) {
    const int g = s.group_order[rank];
    std::fill(s.biased + g * per_group, s.biased + (g + 1) * per_group, kMinusInf);
  }
}

// Selects the experts of one row from its (sigmoid) scores.
void SelectRow(const MoeRouteArgs& a, const float* scores, const RowScratch& s, int32_t* experts,
               float* weights, float* gap) {
  const int e = a.num_experts;
  for (int i = 0; i < e; ++i) s.biased[i] = scores[i] + a.bias[i];
  if (a.num_groups > 1) MaskGroups(a, s);
  RankFirst(s.biased, e, std::min(a.top_k + 1, e), s.order);
  double sum = 0.0;
  for (int j = 0; j < a.top_k; ++j) {
    experts[j] = s.order[j];
    weights[j] = scores[s.order[j]];  // unbiased score
    sum += weights[j];
  }
  const float kth = s.biased[s.order[a.top_k - 1]];
  const float next = a.top_k < e ? s.biased[s.order[a.top_k]] : kMinusInf;
  *gap = std::min(*gap, kth - next);
  for (int j = 0; j < a.top_k; ++j) {
    if (a.renormalize) weights[j] = static_cast<float>(weights[j] / (sum + 1e-20));
    weights[j] *= a.routed_scaling;
  }
}

}  // namespace

void MoeRoute(const MoeRouteArgs& a, base::ThreadPool* pool, Workspace& ws) {
  // Rows are independent. Work per row, for ForRanges: a sigmoid and a share of the partial sort
  // per expert (a row of 64 experts took ~2.5 us on the 2-core VM).
  constexpr int64_t kWorkPerExpert = 128;
  ForRanges(pool, a.rows, kWorkPerExpert * a.num_experts, [&](int64_t r0, int64_t r1, size_t slot) {
    base::Arena& arena = ws.slot(slot);
    base::ArenaMark mark(arena);
    const RowScratch s{arena.Allocate<float>(a.num_experts), arena.Allocate<int>(a.num_experts),
                       arena.Allocate<float>(a.num_groups), arena.Allocate<int>(a.num_groups)};
    for (int64_t r = r0; r < r1; ++r) {
      float* scores = a.scores + r * a.num_experts;
      for (int i = 0; i < a.num_experts; ++i) scores[i] = FastSigmoid(scores[i]);
      SelectRow(a, scores, s, a.experts + r * a.top_k, a.weights + r * a.top_k, a.min_gap + r);
    }
  });
}

}  // namespace k3::kernels::cpu
