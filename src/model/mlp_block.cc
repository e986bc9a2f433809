#include "model/mlp_block.h"

#include "base/arena.h"

namespace k3::model {

kernels::ActivationShape ActivationOf(const ModelConfig& c) {
  kernels::ActivationShape shape;
  shape.kind = c.activation == Activation::kSitu ? kernels::ActivationKind::kSitu
                                                 : kernels::ActivationKind::kSilu;
  shape.situ_beta = c.situ_beta;
  shape.situ_linear_beta = c.situ_linear_beta;
  return shape;
}

void MlpForward(const MlpRunner& run, const MlpWeights& w, const float* x, int64_t rows,
                float* out) {
  const int64_t hidden = w.gate.rows;
  base::ArenaMark mark(run.ws.arena());
  float* gate = run.ws.arena().Allocate<float>(rows * hidden);  // [rows, I]
  float* up = run.ws.arena().Allocate<float>(rows * hidden);    // [rows, I]
  run.backend.MatMul(x, rows, w.gate, gate, run.ws);
  run.backend.MatMul(x, rows, w.up, up, run.ws);
  kernels::ActivationShape act = run.activation;
  act.n = rows * hidden;
  run.backend.Glu(act, gate, up, gate);
  run.backend.MatMul(gate, rows, w.down, out, run.ws);
}

}  // namespace k3::model
