// Feed-forward blocks: the dense GLU MLP, and the routed MoE (spec/model.md §4): sigmoid router
// with a selection-only correction bias, grouped top-k, renormalisation and routed scaling, shared
// experts, and K3's latent projection with its RMSNorm (§4.3). SiLU or SiTU per the config.
#pragma once

#include <cstdint>
#include <vector>

#include "base/thread_pool.h"
#include "model/batch.h"
#include "model/config.h"
#include "model/model_weights.h"

namespace k3::model {

// out[rows, D] = down(act(gate x) * up x).
void MlpForward(const ModelConfig& config, const MlpWeights& w, const float* x, int64_t rows,
                bool mxfp8, base::ThreadPool* pool, float* out);

struct RouterChoice {
  std::vector<int> experts;    // [rows, top_k]
  std::vector<float> weights;  // [rows, top_k], renormalised and scaled
  std::vector<float> min_gap;  // [rows]: k-th minus (k+1)-th biased score among eligible experts
};

// Routes each row of x [rows, D].
RouterChoice Route(const ModelConfig& config, const MoeWeights& w, const float* x, int64_t rows,
                   base::ThreadPool* pool);

// out[rows, D]; router_gaps (optional, [rows]) is lowered to the smallest gap seen.
void MoeForward(const ModelConfig& config, const MoeWeights& w, const float* x, int64_t rows,
                const ForwardOptions& options, base::ThreadPool* pool, float* out,
                float* router_gaps);

}  // namespace k3::model
