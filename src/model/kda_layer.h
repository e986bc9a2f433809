// A Kimi Delta Attention layer (spec/model.md §2.3): projections, short causal convolutions with
// their rolling state, the decay gate (Kimi-Linear softplus or K3 lower-bound sigmoid), the delta
// rule per head, the gated per-head RMSNorm and the output projection.
#pragma once

#include <span>

#include "base/thread_pool.h"
#include "model/batch.h"
#include "model/config.h"
#include "model/model_weights.h"
#include "model/state.h"

namespace k3::model {

// x: normed input [rows, hidden]; out: [rows, hidden]. A sequence with start_position 0 starts
// from a zero state; otherwise it continues from its slot.
void KdaForward(const ModelConfig& config, const KdaWeights& w, int kda_layer, const float* x,
                std::span<const SequenceRows> seqs, const ForwardOptions& options,
                KdaStatePool& states, base::ThreadPool* pool, float* out);

}  // namespace k3::model
