// Turns one row of logits into the next token: penalties, temperature, top-k, top-p, min-p, then a
// draw from a counter-based generator, so a (seed, step) pair always yields the same uniform
// number whatever else runs in the batch. Also computes the log-probabilities asked for.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/sampling_params.h"

namespace k3::engine {

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0.0f;
};

struct SampledToken {
  int32_t token = 0;
  float logprob = 0.0f;           // of `token` under the raw distribution (if logprobs >= 0)
  std::vector<TokenLogprob> top;  // the `logprobs` most likely tokens, most likely first
};

// The tokens a sequence has seen, for penalties. Prompt tokens matter only to the repetition
// penalty; output counts drive presence/frequency.
struct PenaltyState {
  std::unordered_map<int32_t, int32_t> output_counts;
  std::vector<int32_t> prompt_tokens;  // sorted, unique; filled only if repetition_penalty != 1
  void AddOutput(int32_t token) { ++output_counts[token]; }
};

// A uniform double in [0, 1) from (seed, step): SplitMix64 finalisers over the pair, so draws do
// not depend on how many other draws happened before (batch composition, preemption).
double UniformForStep(uint64_t seed, uint64_t step);

// Thread-compatible: one Sampler per thread (its scratch is reused between calls).
class Sampler {
 public:
  // `logits` is modified in place (it is scratch); -inf marks a masked token, and at least one
  // logit must be finite (none NaN). `step` is the index of the token being generated within its
  // sequence (0 for the first). Cost: O(vocab) plus O(k log k), k being the tokens kept by
  // top_p/min_p (the whole top-k set when top_k is set), plus one bucket of probabilities 2^(1/8)
  // wide around the cut.
  SampledToken Sample(std::span<float> logits, const SamplingParams& params,
                      const PenaltyState& penalties, uint64_t seed, uint64_t step);

 private:
  // Scratch, reused between calls.
  std::vector<float> raw_logprobs_;   // [vocab] raw log-softmax, filled only when logprobs >= 0
  std::vector<uint64_t> candidates_;  // [<= vocab] (probability bits << 32 | ~token): sorts by key
  std::vector<float> probs_;          // [vocab] unnormalised tempered probabilities, max exactly 1
};

}  // namespace k3::engine
