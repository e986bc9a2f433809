#include "model/residual_stream.h"

namespace k3::model {

ResidualStream::ResidualStream(const ForwardContext& ctx, float* stream)
    : ctx_(ctx), attn_res_(ctx.config.attn_res_block_size > 0), stream_(stream) {
  if (!attn_res_) return;
  const int blocks =
      (ctx.config.num_layers + ctx.config.attn_res_block_size - 1) / ctx.config.attn_res_block_size;
  mixed_ = ctx.Scratch<float>(ctx.rows * ctx.config.hidden);
  bank_ = ctx.host.Allocate<const float*>(blocks + 1);
}

const float* ResidualStream::Mix(const std::vector<float>& score) {
  bank_[num_snapshots_] = stream_;
  ctx_.backend.AttnResMix({ctx_.rows, ctx_.config.hidden, num_snapshots_ + 1, bank_, score.data(),
                           ctx_.config.rms_eps, mixed_},
                          ctx_.ws);
  return mixed_;
}

const float* ResidualStream::AttentionInput(int layer, const std::vector<float>& score) {
  if (!attn_res_) return stream_;
  const float* input = num_snapshots_ == 0 ? stream_ : Mix(score);
  block_start_ = layer % ctx_.config.attn_res_block_size == 0;
  if (block_start_) {
    const int64_t n = ctx_.rows * ctx_.config.hidden;
    float* snapshot = ctx_.Scratch<float>(n);  // lives for the whole step
    ctx_.backend.Copy(snapshot, stream_, n * sizeof(float));
    bank_[num_snapshots_++] = snapshot;
  }
  return input;
}

void ResidualStream::AddAttentionOutput(float*& sublayer_out) {
  if (block_start_) {
    std::swap(stream_, sublayer_out);  // a new block's partial sum starts from this output
    block_start_ = false;
    return;
  }
  ctx_.backend.Add(stream_, sublayer_out, ctx_.rows * ctx_.config.hidden);
}

const float* ResidualStream::FfnInput(const std::vector<float>& score) {
  return attn_res_ ? Mix(score) : stream_;
}

void ResidualStream::AddFfnOutput(const float* sublayer_out) {
  ctx_.backend.Add(stream_, sublayer_out, ctx_.rows * ctx_.config.hidden);
}

const float* ResidualStream::Output(const std::vector<float>& score) {
  return attn_res_ ? Mix(score) : stream_;
}

}  // namespace k3::model
