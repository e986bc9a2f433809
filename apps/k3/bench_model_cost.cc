#include "apps/k3/bench_model_cost.h"

#include <cmath>

#include "model/state.h"

namespace k3::app {

int64_t MatrixBytes(const model::WeightMatrix& w) {
  const int64_t n = w.rows * w.cols;
  switch (w.format) {
    case kernels::WeightFormat::kF32:
      return n * 4;
    case kernels::WeightFormat::kBF16:
    case kernels::WeightFormat::kF16:
      return n * 2;
    case kernels::WeightFormat::kBf16Panels:
      return kernels::Bf16PanelsElements(w.rows, w.cols) * 2;
    case kernels::WeightFormat::kMxfp4:
      return n / 2 + n / 32;
    case kernels::WeightFormat::kInt4:
      return n / 2 + n / 16;
    case kernels::WeightFormat::kInt8Block:
      return n + n / 16;
    case kernels::WeightFormat::kFp8Block:
      return n + n / (w.block * w.block) * 4;
  }
  return 0;
}

// Bytes one decode step moves for one sequence at `context` cached positions: the latent cache
// read (the new entry's write is one position more), the KDA states read and written.
double SequenceBytes(const model::ModelConfig& c, int64_t context, kernels::LatentDtype dtype) {
  if (context <= 0) return 0;
  const double cache = double(context + 1) * model::MlaCache::BytesPerToken(c, dtype);
  const double dk = c.kda.head_dim;
  const double recurrent = double(c.kda.num_heads) * dk * dk;
  const double conv = 3.0 * (c.kda.conv_kernel - 1) * c.kda.projection_dim();
  return cache + 2.0 * 4.0 * (recurrent + conv) * c.num_kda_layers();
}

StepCost CostOfStep(const model::Model& m, int batch, int64_t context,
                    kernels::LatentDtype cache_dtype) {
  const auto& c = m.config();
  const auto& w = m.weights();
  StepCost cost;
  auto add = [&](const model::WeightMatrix& x, double share = 1.0) {
    cost.bytes += MatrixBytes(x) * share;
  };
  auto mlp = [&](const model::MlpWeights& x, double share = 1.0) {
    add(x.gate, share);
    add(x.up, share);
    add(x.down, share);
  };
  add(w.lm_head);
  cost.macs_per_token += double(w.lm_head.rows) * w.lm_head.cols;
  for (const auto& l : w.layers) {
    for (const auto* x : {&l.kda.q, &l.kda.k, &l.kda.v, &l.kda.f_a, &l.kda.f_b, &l.kda.beta,
                          &l.kda.g, &l.kda.g_a, &l.kda.g_b, &l.kda.o, &l.mla.q_a, &l.mla.q_b,
                          &l.mla.q, &l.mla.kv_a, &l.mla.kv_b, &l.mla.g, &l.mla.o}) {
      add(*x);
      cost.macs_per_token += double(x->rows) * x->cols;
    }
    if (!l.moe) {
      mlp(l.dense);
      cost.macs_per_token += 3.0 * l.dense.gate.rows * l.dense.gate.cols;
      continue;
    }
    const auto& moe = l.moe_weights;
    add(moe.router);
    add(moe.latent_down);
    add(moe.latent_up);
    if (moe.has_shared) mlp(moe.shared);
    const double e = c.moe.num_experts, k = c.moe.top_k;
    const double distinct = e * (1.0 - std::pow(1.0 - k / e, batch));
    mlp(moe.experts[0], distinct);
    const auto& x = moe.experts[0];
    cost.macs_per_token +=
        double(moe.router.rows) * moe.router.cols +
        2.0 * moe.latent_down.rows * moe.latent_down.cols +
        (moe.has_shared ? 3.0 * moe.shared.gate.rows * moe.shared.gate.cols : 0) +
        k * 3.0 * x.gate.rows * x.gate.cols;
  }
  cost.sequence_bytes = batch * SequenceBytes(c, context, cache_dtype);
  cost.bytes += cost.sequence_bytes;
  return cost;
}

}  // namespace k3::app
