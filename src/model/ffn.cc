#include "model/ffn.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "kernels/matmul.h"
#include "model/ops.h"

namespace k3::model {
namespace {

void Activate(const ModelConfig& c, const float* gate, const float* up, int64_t n, float* out) {
  if (c.activation == Activation::kSitu) {
    SituAndMul(gate, up, n, c.situ_beta, c.situ_linear_beta, out);
  } else {
    SiluAndMul(gate, up, n, out);
  }
}

void MaybeQuantize(bool mxfp8, float* x, int64_t n) {
  if (mxfp8) kernels::QuantizeMxfp8InPlace(x, n);
}

// Selects the experts of one row from its scores (spec §4.1).
void SelectRow(const MoeConfig& m, const float* scores, const float* bias, int* experts,
               float* weights, float* gap) {
  const int e = m.num_experts;
  std::vector<float> biased(e);
  for (int i = 0; i < e; ++i) biased[i] = scores[i] + bias[i];
  if (m.num_groups > 1) {
    const int per_group = e / m.num_groups;
    std::vector<float> group_score(m.num_groups);
    for (int g = 0; g < m.num_groups; ++g) {
      std::vector<float> members(biased.begin() + g * per_group,
                                 biased.begin() + (g + 1) * per_group);
      std::partial_sort(members.begin(), members.begin() + std::min(2, per_group), members.end(),
                        std::greater<float>());
      group_score[g] = members[0] + (per_group > 1 ? members[1] : 0.0f);
    }
    std::vector<int> order(m.num_groups);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return group_score[a] > group_score[b]; });
    for (int rank = m.topk_groups; rank < m.num_groups; ++rank) {
      const int g = order[rank];
      for (int i = g * per_group; i < (g + 1) * per_group; ++i) {
        biased[i] = -std::numeric_limits<float>::infinity();
      }
    }
  }
  std::vector<int> order(e);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return biased[a] > biased[b]; });
  double sum = 0.0;
  for (int j = 0; j < m.top_k; ++j) {
    experts[j] = order[j];
    weights[j] = scores[order[j]];  // unbiased score
    sum += weights[j];
  }
  const float kth = biased[order[m.top_k - 1]];
  const float next = m.top_k < e ? biased[order[m.top_k]] : -std::numeric_limits<float>::infinity();
  *gap = kth - next;
  for (int j = 0; j < m.top_k; ++j) {
    if (m.renormalize) weights[j] = static_cast<float>(weights[j] / (sum + 1e-20));
    weights[j] *= m.routed_scaling;
  }
}

}  // namespace

void MlpForward(const ModelConfig& c, const MlpWeights& w, const float* x, int64_t rows, bool mxfp8,
                base::ThreadPool* pool, float* out) {
  const int64_t hidden = w.gate.rows;
  std::vector<float> gate(rows * hidden), up(rows * hidden);
  kernels::MatMul(x, rows, w.gate, gate.data(), pool);
  kernels::MatMul(x, rows, w.up, up.data(), pool);
  Activate(c, gate.data(), up.data(), rows * hidden, gate.data());
  MaybeQuantize(mxfp8, gate.data(), rows * hidden);
  kernels::MatMul(gate.data(), rows, w.down, out, pool);
}

RouterChoice Route(const ModelConfig& c, const MoeWeights& w, const float* x, int64_t rows,
                   base::ThreadPool* pool) {
  const MoeConfig& m = c.moe;
  std::vector<float> scores(rows * m.num_experts);
  kernels::MatMul(x, rows, w.router, scores.data(), pool);
  for (float& s : scores) s = Sigmoid(s);
  RouterChoice choice;
  choice.experts.resize(rows * m.top_k);
  choice.weights.resize(rows * m.top_k);
  choice.min_gap.resize(rows);
  for (int64_t r = 0; r < rows; ++r) {
    SelectRow(m, &scores[r * m.num_experts], w.correction_bias.data(), &choice.experts[r * m.top_k],
              &choice.weights[r * m.top_k], &choice.min_gap[r]);
  }
  return choice;
}

void MoeForward(const ModelConfig& c, const MoeWeights& w, const float* x, int64_t rows,
                const ForwardOptions& options, base::ThreadPool* pool, float* out,
                float* router_gaps) {
  const MoeConfig& m = c.moe;
  RouterChoice choice = Route(c, w, x, rows, pool);
  if (router_gaps) {
    for (int64_t r = 0; r < rows; ++r) router_gaps[r] = std::min(router_gaps[r], choice.min_gap[r]);
  }
  const int64_t width = m.latent_dim > 0 ? m.latent_dim : c.hidden;
  std::vector<float> latent;
  const float* expert_in = x;
  if (m.latent_dim > 0) {
    latent.resize(rows * width);
    kernels::MatMul(x, rows, w.latent_down, latent.data(), pool);
    expert_in = latent.data();
  }
  // Group rows by expert so each expert's weights are read once per forward.
  std::vector<std::vector<std::pair<int64_t, float>>> assigned(m.num_experts);
  for (int64_t r = 0; r < rows; ++r) {
    for (int j = 0; j < m.top_k; ++j) {
      assigned[choice.experts[r * m.top_k + j]].push_back({r, choice.weights[r * m.top_k + j]});
    }
  }
  // One task per active expert, each single-threaded: at decode an expert's matrices are too
  // small to split across threads profitably, and experts are independent. Outputs are summed
  // afterwards in expert order, so the result does not depend on scheduling.
  std::vector<int> active;
  for (int e = 0; e < m.num_experts; ++e) {
    if (!assigned[e].empty()) active.push_back(e);
  }
  std::vector<std::vector<float>> outputs(active.size());
  auto run_expert = [&](size_t task) {
    const int e = active[task];
    const auto& rows_of_e = assigned[e];
    const int64_t n = static_cast<int64_t>(rows_of_e.size());
    std::vector<float> in(n * width);
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(&in[i * width], expert_in + rows_of_e[i].first * width, width * sizeof(float));
    }
    MaybeQuantize(options.mxfp8_experts, in.data(), n * width);
    outputs[task].resize(n * width);
    MlpForward(c, w.experts[e], in.data(), n, options.mxfp8_experts, nullptr, outputs[task].data());
  };
  if (pool) {
    pool->ParallelFor(active.size(), run_expert);
  } else {
    for (size_t task = 0; task < active.size(); ++task) run_expert(task);
  }
  std::vector<float> routed(rows * width, 0.0f);
  for (size_t task = 0; task < active.size(); ++task) {
    const auto& rows_of_e = assigned[active[task]];
    for (size_t i = 0; i < rows_of_e.size(); ++i) {
      float* dst = &routed[rows_of_e[i].first * width];
      const float weight = rows_of_e[i].second;
      const float* y = &outputs[task][i * width];
      for (int64_t k = 0; k < width; ++k) dst[k] += weight * y[k];
    }
  }
  if (m.latent_dim > 0) {
    if (m.latent_norm) {
      RmsNormRows(routed.data(), w.latent_norm.data(), rows, width, c.rms_eps, routed.data());
    }
    kernels::MatMul(routed.data(), rows, w.latent_up, out, pool);
  } else {
    std::memcpy(out, routed.data(), rows * width * sizeof(float));
  }
  if (w.has_shared) {
    std::vector<float> shared(rows * c.hidden);
    MlpForward(c, w.shared, x, rows, false, pool, shared.data());
    AddInPlace(out, shared.data(), rows * c.hidden);
  }
}

}  // namespace k3::model
