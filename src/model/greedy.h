// Greedy decoding on one sequence, for debugging and parity tests: prefill the prompt in one
// forward, then feed each argmax back one token at a time (exercising the decode paths: recurrent
// KDA and absorbed MLA). Records the logits of every step.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "base/result.h"
#include "model/model.h"

namespace k3::model {

struct GreedyOptions {
  int max_tokens = 16;
  bool stop_at_eos = true;
  int page_size = 64;
  ForwardOptions forward;
  // Called after each generated token (for streaming output); may be empty.
  std::function<void(int32_t)> on_token;
};

struct GreedyResult {
  std::vector<int32_t> generated;
  std::vector<float> step_logits;      // [steps, vocab]: step 0 = last prompt position
  std::vector<float> step_router_gap;  // [steps]
  double prefill_seconds = 0.0;
  double decode_seconds = 0.0;
};

base::Result<GreedyResult> GreedyGenerate(const Model& model, std::span<const int32_t> prompt,
                                          const GreedyOptions& options);

// Index of the largest value (the first on ties).
int32_t Argmax(const float* values, int64_t n);

}  // namespace k3::model
