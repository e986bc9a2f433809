// A Kimi Delta Attention block (spec/model.md §2.3): q/k/v projections, short causal
// convolutions with their rolling state, the decay gate (Kimi-Linear softplus or K3 lower-bound
// sigmoid) and beta, L2-normalised q and k, the delta rule per head (chunked or recurrent), the
// sigmoid-gated per-head RMSNorm and the output projection.
#pragma once

#include "model/model_weights.h"

namespace k3::model {

struct ForwardContext;

// x: normed input [rows, hidden]; out: [rows, hidden]. A sequence at position 0 starts from a
// zero state; otherwise it continues from its slot's state for this KDA layer.
void KdaBlock(const ForwardContext& ctx, const KdaWeights& w, int kda_layer, const float* x,
              float* out);

}  // namespace k3::model
