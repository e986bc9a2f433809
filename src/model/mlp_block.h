// The dense GLU MLP: out[rows, D] = down(act(gate x) * up x), SiLU or SiTU per the config
// (spec/model.md §4.3). Used for dense layers, shared experts and benchmarks of one expert.
#pragma once

#include <cstdint>

#include "kernels/backend.h"
#include "model/config.h"
#include "model/model_weights.h"

namespace k3::model {

// Where an MLP runs and its activation (ActivationShape::n is set per call).
struct MlpRunner {
  kernels::Backend& backend;
  kernels::Workspace& ws;
  kernels::ActivationShape activation;
};

// The config's FFN activation as the kernels name it.
kernels::ActivationShape ActivationOf(const ModelConfig& config);

// x: [rows, D]; out: [rows, D]. Scratch [2, rows, I] from run.ws, released on return.
void MlpForward(const MlpRunner& run, const MlpWeights& w, const float* x, int64_t rows,
                float* out);

}  // namespace k3::model
