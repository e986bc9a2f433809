#include "model/decoder_layer.h"

#include "model/kda_block.h"
#include "model/mla_block.h"
#include "model/mlp_block.h"
#include "model/moe_block.h"

namespace k3::model {

LayerBuffers MakeLayerBuffers(const ForwardContext& ctx) {
  const int64_t n = ctx.rows * ctx.config.hidden;
  return {ctx.Scratch<float>(n), ctx.Scratch<float>(n)};
}

void RunDecoderLayer(const ForwardContext& ctx, const LayerWeights& lw, int layer,
                     ResidualStream& stream, LayerBuffers& buffers) {
  const ModelConfig& c = ctx.config;
  const kernels::RmsNormShape norm{ctx.rows, c.hidden, c.rms_eps};
  kernels::Backend& b = ctx.backend;
  b.RmsNorm(norm, stream.AttentionInput(layer, lw.attn_res_score), lw.input_norm.data(),
            buffers.normed);
  if (lw.kind == LayerKind::kKda) {
    KdaBlock(ctx, lw.kda, lw.kind_index, buffers.normed, buffers.sublayer_out);
  } else {
    MlaBlock(ctx, lw.mla, lw.kind_index, buffers.normed, buffers.sublayer_out);
  }
  stream.AddAttentionOutput(buffers.sublayer_out);
  b.RmsNorm(norm, stream.FfnInput(lw.mlp_res_score), lw.post_norm.data(), buffers.normed);
  if (lw.moe) {
    MoeBlock(ctx, lw.moe_weights, ctx.experts[layer], buffers.normed, buffers.sublayer_out);
  } else {
    MlpForward({b, ctx.ws, ActivationOf(c)}, lw.dense, buffers.normed, ctx.rows,
               buffers.sublayer_out);
  }
  stream.AddFfnOutput(buffers.sublayer_out);
}

const float* RunDecoderStack(const ForwardContext& ctx, const ModelWeights& w, float* hidden) {
  ResidualStream stream(ctx, hidden);
  LayerBuffers buffers = MakeLayerBuffers(ctx);
  for (int layer = 0; layer < ctx.config.num_layers; ++layer) {
    RunDecoderLayer(ctx, w.layers[layer], layer, stream, buffers);
  }
  return stream.Output(w.output_res_score);
}

}  // namespace k3::model
