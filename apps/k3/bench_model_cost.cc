#include "apps/k3/bench_model_cost.h"

#include <algorithm>
#include <cmath>

#include "kernels/matmul.h"
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
  // A product of `tokens` tokens per call by x, `calls` calls a step: its bytes, and per token of
  // the batch `share` of its multiply-adds (the fraction of the batch's tokens it sees).
  auto product = [&](const model::WeightMatrix& x, int64_t tokens, double calls, double share) {
    cost.bytes += MatrixBytes(x) * calls;
    const double macs = double(x.rows) * x.cols * share;
    cost.macs_per_token += macs;
    if (kernels::MatMulRunsInt8(tokens, x)) cost.int8_macs_per_token += macs;
  };
  auto dense = [&](const model::WeightMatrix& x) { product(x, batch, 1.0, 1.0); };
  auto mlp = [&](const model::MlpWeights& x) {
    for (const auto* p : {&x.gate, &x.up, &x.down}) dense(*p);
  };
  dense(w.lm_head);
  for (const auto& l : w.layers) {
    for (const auto* x : {&l.kda.q, &l.kda.k, &l.kda.v, &l.kda.f_a, &l.kda.f_b, &l.kda.beta,
                          &l.kda.g, &l.kda.g_a, &l.kda.g_b, &l.kda.o, &l.mla.q_a, &l.mla.q_b,
                          &l.mla.q, &l.mla.kv_a, &l.mla.kv_b, &l.mla.g, &l.mla.o}) {
      dense(*x);
    }
    if (!l.moe) {
      mlp(l.dense);
      continue;
    }
    const auto& moe = l.moe_weights;
    dense(moe.router);
    dense(moe.latent_down);
    dense(moe.latent_up);
    if (moe.has_shared) mlp(moe.shared);
    // Each token's top_k experts out of E: `distinct` experts touched, each by batch k / distinct
    // tokens on average.
    const double e = c.moe.num_experts, k = c.moe.top_k;
    const double distinct = e * (1.0 - std::pow(1.0 - k / e, batch));
    const auto per_expert = std::max<int64_t>(1, std::llround(batch * k / distinct));
    const auto& x = moe.experts[0];
    for (const auto* p : {&x.gate, &x.up, &x.down}) product(*p, per_expert, distinct, k);
  }
  cost.sequence_bytes = batch * SequenceBytes(c, context, cache_dtype);
  cost.bytes += cost.sequence_bytes;
  return cost;
}

}  // namespace k3::app
