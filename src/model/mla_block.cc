#include "model/mla_block.h"

#include <cmath>

#include "model/forward_context.h"

namespace k3::model {
namespace {

// q: [rows, H, dn + dr] from x, through the q_lora bottleneck and its norm when there is one.
void ProjectQueries(const ForwardContext& ctx, const MlaWeights& w, const float* x, float* q) {
  const MlaConfig& m = ctx.config.mla;
  kernels::Backend& b = ctx.backend;
  if (m.q_lora_rank == 0) return b.MatMul(x, ctx.rows, w.q, q, ctx.ws);
  base::ArenaMark mark(ctx.ws.arena());
  float* cq = ctx.Scratch<float>(ctx.rows * m.q_lora_rank);  // [rows, q_lora]
  b.MatMul(x, ctx.rows, w.q_a, cq, ctx.ws);
  b.RmsNorm({ctx.rows, m.q_lora_rank, m.q_norm_eps}, cq, w.q_a_norm.data(), cq);
  b.MatMul(cq, ctx.rows, w.q_b, q, ctx.ws);
}

// The rotary part of every head of q and of the shared key k_pe (RoPE models only).
void Rotate(const ForwardContext& ctx, float* q, float* kv) {
  const MlaConfig& m = ctx.config.mla;
  const int64_t entry = m.cache_dim(), qk = m.qk_dim();
  const kernels::RopeTable table = ctx.rope->table();
  ctx.backend.ApplyRope({table, ctx.rows, 1, entry, 0, ctx.positions, kv + m.kv_lora_rank});
  ctx.backend.ApplyRope(
      {table, ctx.rows, m.num_heads, m.num_heads * qk, qk, ctx.positions, q + m.qk_nope_dim});
}

}  // namespace

void MlaBlock(const ForwardContext& ctx, const MlaWeights& w, int mla_layer, const float* x,
              float* out) {
  const MlaConfig& m = ctx.config.mla;
  const int64_t rows = ctx.rows, h = m.num_heads, entry = m.cache_dim();
  kernels::Backend& b = ctx.backend;
  base::ArenaMark mark(ctx.ws.arena());
  float* q = ctx.Scratch<float>(rows * h * m.qk_dim());  // [rows, H, dn + dr]
  float* kv = ctx.Scratch<float>(rows * entry);          // [rows, r + dr]: the new cache entries
  ProjectQueries(ctx, w, x, q);
  b.MatMul(x, rows, w.kv_a, kv, ctx.ws);
  b.RmsNorm({rows, m.kv_lora_rank, m.kv_norm_eps, entry, entry}, kv, w.kv_a_norm.data(), kv);
  if (ctx.rope) Rotate(ctx, q, kv);
  const kernels::LatentCacheView view = ctx.cache.layer_view(mla_layer);
  b.WriteLatentCache(view, ctx.paged, kv);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(m.qk_dim())) *
                                         (ctx.rope ? ctx.rope->softmax_scale_factor() : 1.0));
  const kernels::MlaShape shape{h,    m.qk_nope_dim, m.qk_rope_dim, m.v_head_dim, m.kv_lora_rank,
                                scale};
  float* attn = ctx.Scratch<float>(rows * h * m.v_head_dim);  // [rows, H, dv]
  b.MlaAttention({shape, q, view, &w.kv_b, w.kv_b_absorbed.layout(), attn}, ctx.mla_seqs, ctx.ws);
  if (m.output_gate) {
    float* gate = ctx.Scratch<float>(rows * h * m.v_head_dim);  // [rows, H dv]
    b.MatMul(x, rows, w.g, gate, ctx.ws);
    b.SigmoidGate(attn, gate, rows * h * m.v_head_dim);
  }
  b.MatMul(attn, rows, w.o, out, ctx.ws);
}

}  // namespace k3::model
