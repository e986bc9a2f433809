// The residual stream of a decoder stack, [rows, hidden] in backend scratch, in one of two forms:
// - plain: each sublayer reads the stream and adds its output to it;
// - Attention Residuals (K3, spec/model.md §5.2): the stream is the current block's partial sum;
//   at a block's first layer a snapshot of it joins the bank and the attention output starts the
//   new partial sum; every sublayer (and the final norm) reads a softmax mix over the bank and
//   the partial sum, scored by the site's folded vector.
#pragma once

#include <vector>

#include "model/forward_context.h"

namespace k3::model {

class ResidualStream {
 public:
  // stream: the embedded tokens [rows, hidden] (owned by the caller's scratch, rewritten here).
  ResidualStream(const ForwardContext& ctx, float* stream);

  // The attention sublayer's input (not normalised) before layer `layer`; `score` is the layer's
  // AttnRes score vector (ignored by plain streams).
  const float* AttentionInput(int layer, const std::vector<float>& score);
  // Takes the attention output; `sublayer_out` may be swapped with the stream's buffer.
  void AddAttentionOutput(float*& sublayer_out);
  const float* FfnInput(const std::vector<float>& score);
  void AddFfnOutput(const float* sublayer_out);
  // The final norm's input.
  const float* Output(const std::vector<float>& score);

 private:
  const float* Mix(const std::vector<float>& score);

  const ForwardContext& ctx_;
  const bool attn_res_;
  float* stream_;
  float* mixed_ = nullptr;        // [rows, hidden] (AttnRes)
  const float** bank_ = nullptr;  // host [blocks + 1]: snapshots, then the partial sum
  int num_snapshots_ = 0;
  bool block_start_ = false;
};

}  // namespace k3::model
