// `k3 bench model --weight-quant int8` (or bf16-panels): how far the converted model's logits are
// from the exact model's, on the same prompt.
#pragma once

#include <string>

#include "model/model.h"

namespace k3::app {

// Prefills `tokens` deterministic ids on both models (logits at every position) and prints the
// relative logit error (max |difference| / max |exact logit| per position: median and worst) and
// how often the two argmaxes agree.
// `flag`: the --weight-quant value the quantised model was loaded with.
void PrintQuantError(const model::Model& exact, const model::Model& quantised, int tokens,
                     const std::string& flag);

}  // namespace k3::app
