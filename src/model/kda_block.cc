#include "model/kda_block.h"

#include <cmath>

#include "model/forward_context.h"

namespace k3::model {
namespace {

// The raw projections of x ([rows, P] each, beta [rows, H]).
struct Projections {
  float *q, *k, *v, *g, *beta, *gate;
};

Projections Project(const ForwardContext& ctx, const KdaWeights& w, const float* x) {
  const KdaConfig& kda = ctx.config.kda;
  const int64_t rows = ctx.rows, p = kda.projection_dim(), kd = kda.head_dim;
  kernels::Backend& b = ctx.backend;
  Projections pr{ctx.Scratch<float>(rows * p),
                 ctx.Scratch<float>(rows * p),
                 ctx.Scratch<float>(rows * p),
                 ctx.Scratch<float>(rows * p),
                 ctx.Scratch<float>(rows * kda.num_heads),
                 ctx.Scratch<float>(rows * p)};
  base::ArenaMark mark(ctx.ws.arena());
  float* low = ctx.Scratch<float>(rows * kd);  // [rows, K]: the low-rank bottlenecks
  b.MatMul(x, rows, w.q, pr.q, ctx.ws);
  b.MatMul(x, rows, w.k, pr.k, ctx.ws);
  b.MatMul(x, rows, w.v, pr.v, ctx.ws);
  b.MatMul(x, rows, w.f_a, low, ctx.ws);
  b.MatMul(low, rows, w.f_b, pr.g, ctx.ws);
  b.MatMul(x, rows, w.beta, pr.beta, ctx.ws);
  if (kda.full_rank_output_gate) {
    b.MatMul(x, rows, w.g, pr.gate, ctx.ws);
  } else {
    b.MatMul(x, rows, w.g_a, low, ctx.ws);
    b.MatMul(low, rows, w.g_b, pr.gate, ctx.ws);
  }
  return pr;
}

// The short convolutions of q, k and v, each with its history in the sequence's slot:
// [3][kernel - 1][P], q first.
void Convolve(const ForwardContext& ctx, const KdaWeights& w, int kda_layer, const Projections& pr,
              float* q, float* k, float* v) {
  const int64_t p = ctx.config.kda.projection_dim();
  const int taps = ctx.config.kda.conv_kernel;
  base::ArenaMark mark(ctx.host);
  kernels::ConvSequence* seqs = ctx.host.Allocate<kernels::ConvSequence>(ctx.seqs.size());
  const struct {
    const float* raw;
    const std::vector<float>& taps_w;
    float* out;
  } parts[3] = {{pr.q, w.q_conv, q}, {pr.k, w.k_conv, k}, {pr.v, w.v_conv, v}};
  for (int part = 0; part < 3; ++part) {
    for (size_t i = 0; i < ctx.seqs.size(); ++i) {
      const SequenceRows& s = ctx.seqs[i];
      float* history = ctx.states.conv_state(s.state_slot, kda_layer) + part * (taps - 1) * p;
      seqs[i] = {s.row_begin, s.rows, history};
    }
    ctx.backend.ShortConv({p, taps, parts[part].taps_w.data(), parts[part].raw, parts[part].out},
                          {seqs, ctx.seqs.size()});
  }
}

// The delta rule over every (sequence, head), chunked for runs of at least kda_chunk tokens in
// KdaMode::kAuto.
void DeltaRule(const ForwardContext& ctx, int kda_layer, const float* q, const float* k,
               const float* v, const Projections& pr, float* o) {
  const KdaConfig& kda = ctx.config.kda;
  const ForwardOptions& opt = ctx.options;
  base::ArenaMark mark(ctx.host);
  kernels::KdaSequence* seqs = ctx.host.Allocate<kernels::KdaSequence>(ctx.seqs.size());
  for (size_t i = 0; i < ctx.seqs.size(); ++i) {
    const SequenceRows& s = ctx.seqs[i];
    const bool chunked = opt.kda_mode == KdaMode::kChunked ||
                         (opt.kda_mode == KdaMode::kAuto && s.rows >= opt.kda_chunk);
    seqs[i] = {s.row_begin, s.rows, ctx.states.recurrent_state(s.state_slot, kda_layer), chunked};
  }
  const kernels::KdaArgs args{
      kda.num_heads, kda.head_dim, kda.head_dim, opt.kda_chunk, q, k, v, pr.g, pr.beta, o};
  ctx.backend.KdaDeltaRule(args, {seqs, ctx.seqs.size()}, ctx.ws);
}

}  // namespace

void KdaBlock(const ForwardContext& ctx, const KdaWeights& w, int kda_layer, const float* x,
              float* out) {
  const ModelConfig& c = ctx.config;
  const KdaConfig& kda = c.kda;
  const int64_t rows = ctx.rows, h = kda.num_heads, kd = kda.head_dim, p = h * kd;
  kernels::Backend& b = ctx.backend;
  base::ArenaMark mark(ctx.ws.arena());
  const Projections pr = Project(ctx, w, x);
  b.KdaGates(
      {rows, h, kd,
       kda.lower_bound_gate ? kernels::KdaGateKind::kLowerBound : kernels::KdaGateKind::kSoftplus,
       kda.gate_lower_bound, w.a_log.data(), w.dt_bias.data(), pr.g, pr.beta});
  for (const SequenceRows& s : ctx.seqs) {
    if (s.start_position == 0) ctx.states.ResetLayer(s.state_slot, kda_layer);
  }
  float* q = ctx.Scratch<float>(rows * p);  // [rows, H, K]
  float* k = ctx.Scratch<float>(rows * p);  // [rows, H, K]
  float* v = ctx.Scratch<float>(rows * p);  // [rows, H, V]
  Convolve(ctx, w, kda_layer, pr, q, k, v);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kd));
  b.L2Normalize({rows * h, kd, scale}, q);
  b.L2Normalize({rows * h, kd, 1.0f}, k);
  float* o = pr.q;  // [rows, H, V]: the raw q projection is no longer needed
  DeltaRule(ctx, kda_layer, q, k, v, pr, o);
  // Gated per-head RMSNorm: o = RMSNorm(o) * o_norm * sigmoid(gate).
  b.GatedRmsNorm({rows * h, kd, c.rms_eps}, o, w.o_norm.data(), pr.gate, o);
  b.MatMul(o, rows, w.o, out, ctx.ws);
}

}  // namespace k3::model
