// MoE routing, dispatch and combine by definition: sigmoid in double, full stable sorts.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "kernels/reference/reference_backend.h"

namespace k3::kernels::reference {
namespace {

// Indices sorted by value descending, ties keeping index order.
std::vector<int> Ranked(const std::vector<double>& value) {
  std::vector<int> order(value.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return value[a] > value[b]; });
  return order;
}

}  // namespace

void ReferenceBackend::MoeRoute(const MoeRouteArgs& a, Workspace&) {
  const int e = a.num_experts, per_group = e / a.num_groups;
  for (int64_t r = 0; r < a.rows; ++r) {
    float* scores = a.scores + r * e;
    std::vector<double> score(e), biased(e);
    for (int i = 0; i < e; ++i) {
      score[i] = SigmoidRef(scores[i]);
      scores[i] = static_cast<float>(score[i]);
      biased[i] = score[i] + a.bias[i];
    }
    if (a.num_groups > 1) {
      std::vector<double> group_score(a.num_groups);
      for (int g = 0; g < a.num_groups; ++g) {
        std::vector<double> members(biased.begin() + g * per_group,
                                    biased.begin() + (g + 1) * per_group);
        std::sort(members.rbegin(), members.rend());
        group_score[g] = members[0] + (per_group > 1 ? members[1] : 0.0);
      }
      const std::vector<int> groups = Ranked(group_score);
      for (int rank = a.topk_groups; rank < a.num_groups; ++rank) {
        for (int i = 0; i < per_group; ++i) {
          biased[groups[rank] * per_group + i] = -std::numeric_limits<double>::infinity();
        }
      }
    }
    const std::vector<int> order = Ranked(biased);
    double sum = 0.0;
    for (int j = 0; j < a.top_k; ++j) sum += score[order[j]];
    for (int j = 0; j < a.top_k; ++j) {
      a.experts[r * a.top_k + j] = order[j];
      const double w = a.renormalize ? score[order[j]] / (sum + 1e-20) : score[order[j]];
      a.weights[r * a.top_k + j] = static_cast<float>(w * a.routed_scaling);
    }
    const double next =
        a.top_k < e ? biased[order[a.top_k]] : -std::numeric_limits<double>::infinity();
    a.min_gap[r] = std::min(a.min_gap[r], static_cast<float>(biased[order[a.top_k - 1]] - next));
  }
}

void ReferenceBackend::MoeDispatch(const MoeDispatchArgs& a) {
  int64_t slot = 0;
  for (int e = 0; e < a.num_experts; ++e) {
    a.expert_offsets[e] = slot;
    for (int64_t r = 0; r < a.rows; ++r) {
      for (int j = 0; j < a.top_k; ++j) {
        if (a.experts[r * a.top_k + j] != e) continue;
        a.source_rows[slot] = r;
        a.source_weights[slot] = a.weights[r * a.top_k + j];
        for (int64_t c = 0; c < a.width; ++c) {
          a.gathered[slot * a.width + c] = a.x[r * a.width + c];
        }
        ++slot;
      }
    }
  }
  a.expert_offsets[a.num_experts] = slot;
}

void ReferenceBackend::MoeCombine(const MoeCombineArgs& a) {
  std::vector<double> out(a.rows * a.width, 0.0);
  for (int64_t i = 0; i < a.assignments; ++i) {
    for (int64_t c = 0; c < a.width; ++c) {
      out[a.source_rows[i] * a.width + c] += double{a.source_weights[i]} * a.y[i * a.width + c];
    }
  }
  for (size_t i = 0; i < out.size(); ++i) a.out[i] = static_cast<float>(out[i]);
}

}  // namespace k3::kernels::reference
