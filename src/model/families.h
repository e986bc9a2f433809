// The composition of each model family, one file each (kimi_k3.cc, kimi_linear.cc,
// deepseek_v3.cc): what runs between the embedding and the final norm / lm_head. The three
// families today share one decoder stack (decoder_layer.h) whose blocks read their variant from
// the config (gates, RoPE, latent MoE, Attention Residuals); a family whose layers differ (a
// draft head, a vision prefix) gets its own forward here. Model picks one by config.family.
#pragma once

#include "model/config.h"
#include "model/forward_context.h"
#include "model/model_weights.h"

namespace k3::model {

struct FamilyGraph {
  // hidden: the embedded tokens [rows, hidden] in; returns the final norm's input [rows, hidden].
  const float* (*forward)(const ForwardContext& ctx, const ModelWeights& w, float* hidden);
};

const FamilyGraph& KimiK3Graph();
const FamilyGraph& KimiLinearGraph();
const FamilyGraph& DeepseekV3Graph();
const FamilyGraph& GraphOf(Family family);

}  // namespace k3::model
