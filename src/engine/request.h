// The engine's request and output types: token ids in, token ids (and log-probabilities) out.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "base/status.h"
#include "engine/sampler.h"
#include "engine/sampling_params.h"

namespace k3::engine {

enum class FinishReason { kNone, kStop, kLength, kCancelled, kError };
const char* FinishReasonName(FinishReason reason);

struct RequestOutput {
  uint64_t request_id = 0;
  int index = 0;                       // which of the n completions
  std::vector<int32_t> tokens;         // new tokens since the previous output
  std::vector<SampledToken> logprobs;  // one per new token, if logprobs >= 0 was asked
  FinishReason finish_reason = FinishReason::kNone;  // kNone while running
  base::Status error;                                // set with kError
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;     // prompt tokens served from the prefix cache
  int64_t generated_tokens = 0;  // so far, this completion
  // With a grammar: the output is a complete instance of it (the grammar took its end token).
  // Also true for a kLength finish when the budget made the output end early (see
  // SamplingParams::grammar_ends_within_budget).
  bool grammar_complete = false;
  bool finished() const { return finish_reason != FinishReason::kNone; }
};

using OutputCallback = std::function<void(const RequestOutput&)>;

struct EngineRequest {
  std::vector<int32_t> prompt;
  SamplingParams params;
  // Runs on the engine thread after every step that produced tokens for this request, and once
  // with the finish reason per completion. Keep it short: copy and hand off.
  OutputCallback on_output;
};

}  // namespace k3::engine
