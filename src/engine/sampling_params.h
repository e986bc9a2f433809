// What a request asks of decoding. The engine works in token ids only: stop strings, text
// penalties and the like belong to the frontend, which turns them into these fields or checks
// the streamed text itself.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace k3::structured {
class Grammar;
}

namespace k3::engine {

struct SamplingParams {
  // 0 means greedy (argmax; ties go to the lowest id). Otherwise logits are divided by it.
  double temperature = 1.0;
  double top_p = 1.0;  // (0, 1]: keep the smallest set of most likely tokens with mass >= top_p
  int top_k = 0;       // 0 = off; otherwise keep the top_k most likely tokens
  double min_p = 0.0;  // [0, 1]: drop tokens whose probability < min_p * max probability
  // OpenAI-style penalties on generated tokens: logit -= presence * [count > 0] + frequency *
  // count.
  double presence_penalty = 0.0;   // [-2, 2]
  double frequency_penalty = 0.0;  // [-2, 2]
  // CTRL-style penalty on every token seen (prompt and generated): positive logits are divided by
  // it, negative ones multiplied. 1 = off.
  double repetition_penalty = 1.0;  // (0, 2]
  // Same seed and inputs give the same tokens whatever else is in the batch. Without a seed the
  // engine draws one per request.
  std::optional<uint64_t> seed;
  int64_t max_tokens = 16;              // generated tokens, >= 1
  std::vector<int32_t> stop_token_ids;  // finish ("stop") after emitting one of these
  bool ignore_eos = false;              // otherwise the model's EOS id also stops
  // Log-probabilities: -1 = none; 0 = the chosen token's only; k > 0 = also the k most likely
  // alternatives (at most 20). Reported from the model's raw distribution (before penalties,
  // temperature and truncation), as vLLM does by default.
  int logprobs = -1;
  int n = 1;  // independent completions of one prompt; they share the prompt's cache
  // Scripted output (tests and demos of the API): step i emits forced_tokens[i] instead of a
  // sampled token, the model still runs every step (real cache and slots), and the usual stop
  // rules apply; past the end of the script the sampler takes over again. Empty = off.
  std::vector<int32_t> forced_tokens;
  // Constrained decoding: each sequence gets its own structured::Matcher over this grammar; tokens
  // the grammar does not allow are masked (-inf) before sampling, and the grammar's end tokens
  // are allowed only where it may end. The next step's mask is computed while the forward pass
  // runs. Null = unconstrained.
  std::shared_ptr<const structured::Grammar> grammar;
  // With a grammar: when finishing the output needs about all the tokens max_tokens still
  // allows, only tokens of the shortest way to finish stay allowed (Matcher::FillBudgetedMask),
  // so the output ends complete and valid instead of being cut. Such an output finishes with
  // kLength (the limit shaped it) and RequestOutput::grammar_complete set.
  bool grammar_ends_within_budget = true;

  // INVALID_ARGUMENT naming the first bad field.
  base::Status Validate(int64_t vocab_size) const;
};

}  // namespace k3::engine
