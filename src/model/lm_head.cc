#include "model/lm_head.h"

namespace k3::model {

void Embed(const ForwardContext& ctx, const kernels::WeightMatrix& table, float* out) {
  ctx.backend.GatherRows(table, ctx.token_ids, ctx.rows, out);
}

void LmHead(const ForwardContext& ctx, const ModelWeights& w, std::span<const SequenceInput> batch,
            const float* hidden, ForwardResult* result) {
  const ModelConfig& c = ctx.config;
  const int64_t d = c.hidden;
  kernels::Backend& b = ctx.backend;
  int64_t rows = 0;
  for (const SequenceInput& s : batch) rows += s.num_logit_rows;
  result->rows = rows;
  result->router_min_gap.resize(rows);  // keeps its capacity from step to step
  result->logits.resize(rows * c.vocab);
  base::ArenaMark mark(ctx.ws.arena());
  float* selected = ctx.Scratch<float>(rows * d);  // [rows, hidden]: the rows asked for, normed
  int64_t out_row = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    const int64_t n = batch[i].num_logit_rows;
    const int64_t first = ctx.seqs[i].row_begin + ctx.seqs[i].rows - n;
    b.RmsNorm({n, d, c.rms_eps}, hidden + first * d, w.final_norm.data(), selected + out_row * d);
    b.CopyToHost(result->router_min_gap.data() + out_row, ctx.router_gaps + first,
                 n * sizeof(float));
    out_row += n;
  }
  if (b.memory_is_host()) {
    b.MatMul(selected, rows, w.lm_head, result->logits.data(), ctx.ws);
    return;
  }
  float* logits = ctx.Scratch<float>(rows * c.vocab);
  b.MatMul(selected, rows, w.lm_head, logits, ctx.ws);
  b.CopyToHost(result->logits.data(), logits, rows * c.vocab * sizeof(float));
}

}  // namespace k3::model
