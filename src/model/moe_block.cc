#include "model/moe_block.h"

#include "base/check.h"
#include "model/forward_context.h"
#include "model/mlp_block.h"

namespace k3::model {
namespace {

// The routed experts of every row, summed with their weights into routed [rows, width].
void RoutedExperts(const ForwardContext& ctx, const ExpertTable& experts, const float* expert_in,
                   const int32_t* chosen, const float* weights, float* routed) {
  const MoeConfig& m = ctx.config.moe;
  kernels::Backend& b = ctx.backend;
  const int64_t width = experts.gate[0].cols, inter = experts.gate[0].rows;
  const int64_t assignments = ctx.rows * m.top_k;
  const bool mxfp8 = ctx.options.mxfp8_experts;
  K3_CHECK(!mxfp8 || (width % 32 == 0 && inter % 32 == 0))
      << "MXFP8 expert inputs need widths divisible by 32, got " << width << " and " << inter;
  int64_t* offsets = ctx.Scratch<int64_t>(m.num_experts + 1);  // [experts + 1]
  int64_t* source_rows = ctx.Scratch<int64_t>(assignments);
  float* source_weights = ctx.Scratch<float>(assignments);
  float* gathered = ctx.Scratch<float>(assignments * width);  // [assignments, width]
  b.MoeDispatch({ctx.rows, m.top_k, m.num_experts, width, chosen, weights, expert_in, offsets,
                 source_rows, source_weights, gathered});
  if (mxfp8) b.QuantizeMxfp8(gathered, assignments * width);
  // The grouped products read the group bounds on the host.
  int64_t* host_offsets = ctx.host.Allocate<int64_t>(m.num_experts + 1);
  b.CopyToHost(host_offsets, offsets, (m.num_experts + 1) * sizeof(int64_t));
  kernels::ActivationShape act = ActivationOf(ctx.config);
  float* y = gathered;  // [assignments, width]: each expert reads its inputs before it writes
  b.GroupedMlp({m.num_experts, host_offsets, experts.gate.data(), experts.up.data(),
                experts.down.data(), act, mxfp8, gathered, y},
               ctx.ws);
  b.MoeCombine({ctx.rows, assignments, width, source_rows, source_weights, y, routed});
}

}  // namespace

ExpertTable BuildExpertTable(const MoeWeights& w) {
  ExpertTable table;
  for (const MlpWeights& e : w.experts) {
    table.gate.push_back(e.gate);
    table.up.push_back(e.up);
    table.down.push_back(e.down);
  }
  return table;
}

void MoeBlock(const ForwardContext& ctx, const MoeWeights& w, const ExpertTable& experts,
              const float* x, float* out) {
  const ModelConfig& c = ctx.config;
  const MoeConfig& m = c.moe;
  kernels::Backend& b = ctx.backend;
  const int64_t rows = ctx.rows, width = m.latent_dim > 0 ? m.latent_dim : c.hidden;
  base::ArenaMark mark(ctx.ws.arena());
  base::ArenaMark host_mark(ctx.host);
  float* scores = ctx.Scratch<float>(rows * m.num_experts);  // [rows, experts]
  int32_t* chosen = ctx.Scratch<int32_t>(rows * m.top_k);    // [rows, top_k]
  float* weights = ctx.Scratch<float>(rows * m.top_k);       // [rows, top_k]
  b.MatMul(x, rows, w.router, scores, ctx.ws);
  b.MoeRoute({rows, m.num_experts, m.top_k, m.num_groups, m.topk_groups, m.renormalize,
              m.routed_scaling, scores, w.correction_bias.data(), chosen, weights, ctx.router_gaps},
             ctx.ws);
  const float* expert_in = x;
  if (m.latent_dim > 0) {
    float* latent = ctx.Scratch<float>(rows * width);  // [rows, L]
    b.MatMul(x, rows, w.latent_down, latent, ctx.ws);
    expert_in = latent;
  }
  // Without a latent projection the routed sum is the block's output already.
  float* routed = m.latent_dim > 0 ? ctx.Scratch<float>(rows * width) : out;  // [rows, width]
  RoutedExperts(ctx, experts, expert_in, chosen, weights, routed);
  if (m.latent_dim > 0) {
    if (m.latent_norm) {
      b.RmsNorm({rows, width, c.rms_eps}, routed, w.latent_norm.data(), routed);
    }
    b.MatMul(routed, rows, w.latent_up, out, ctx.ws);
  }
  if (w.has_shared) {
    float* shared = ctx.Scratch<float>(rows * c.hidden);  // [rows, D]
    MlpForward({b, ctx.ws, ActivationOf(c)}, w.shared, x, rows, shared);
    b.Add(out, shared, rows * c.hidden);
  }
}

}  // namespace k3::model
