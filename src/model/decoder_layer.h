// One decoder layer over a residual stream: input norm, the attention sublayer (KDA or MLA, by
// the layer's kind), residual; post-attention norm, the FFN sublayer (dense MLP or MoE), residual.
// The family composition files (kimi_k3.cc, kimi_linear.cc, deepseek_v3.cc) stack these.
#pragma once

#include "model/forward_context.h"
#include "model/model_weights.h"
#include "model/residual_stream.h"

namespace k3::model {

// Scratch the layers of one step share: [rows, hidden] each.
struct LayerBuffers {
  float* normed;
  float* sublayer_out;
};
LayerBuffers MakeLayerBuffers(const ForwardContext& ctx);

void RunDecoderLayer(const ForwardContext& ctx, const LayerWeights& lw, int layer,
                     ResidualStream& stream, LayerBuffers& buffers);

// Every layer over a residual stream (plain, or Attention Residuals when the config has blocks).
// hidden: the embedded tokens [rows, hidden], rewritten; returns the final norm's input.
const float* RunDecoderStack(const ForwardContext& ctx, const ModelWeights& w, float* hidden);

}  // namespace k3::model
