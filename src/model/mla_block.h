// A multi-head latent attention block (spec/model.md §3): DeepSeek-V3/K2 with YaRN RoPE,
// Kimi-Linear NoPE, and K3 NoPE with an output gate. The cache holds, per token, only the
// normalised latent c_kv and the shared key part k_pe; the attention form per sequence
// (naive, naive as GEMMs, absorbed) comes from ForwardOptions (ForwardContext::mla_seqs).
#pragma once

#include "model/model_weights.h"

namespace k3::model {

struct ForwardContext;

// x: normed input [rows, hidden]; out: [rows, hidden]. Writes the new tokens' cache entries into
// their pages, then attends causally over positions [0, start_position + row].
void MlaBlock(const ForwardContext& ctx, const MlaWeights& w, int mla_layer, const float* x,
              float* out);

}  // namespace k3::model
