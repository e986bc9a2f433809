// The routed MoE block (spec/model.md §4): sigmoid router with a selection-only correction bias,
// grouped top-k, renormalisation and routed scaling; the chosen experts as grouped products
// (dispatch, gate/up, activation, down, weighted combine); K3's latent projection with its RMSNorm
// (§4.3); shared experts; optional MXFP8 expert inputs.
#pragma once

#include <vector>

#include "kernels/matmul.h"
#include "model/model_weights.h"

namespace k3::model {

struct ForwardContext;

// One MoE layer's expert matrices as the tables GroupedMlp reads ([experts] each), built once
// at load; empty for dense layers.
struct ExpertTable {
  std::vector<kernels::WeightMatrix> gate, up, down;
};
ExpertTable BuildExpertTable(const MoeWeights& w);

// x: normed input [rows, D]; out: [rows, D]. Lowers ctx.router_gaps to each row's top-k margin.
void MoeBlock(const ForwardContext& ctx, const MoeWeights& w, const ExpertTable& experts,
              const float* x, float* out);

}  // namespace k3::model
