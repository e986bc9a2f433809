// The executor side of sampling: per-sequence sampling state (parameters, seed stream, penalty
// counts) kept from a sequence's first plan to its finish, and the draws of one step under the
// plan's grammar masks. Penalty counts are learned from the token spans the plan schedules (the
// tokens the scheduler committed), so they match the sequence whatever the scheduler decided
// after a draw (a budget redraw, a scripted token).
//
// Thread-compatible; the executor calls it from its one thread. Steady state (no new sequence,
// no penalty on new distinct tokens, no top logprobs) draws without heap allocation.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/sampler.h"
#include "engine/step_plan.h"

namespace k3::engine {

class StepSampler {
 public:
  StepSampler(int64_t vocab_size, int32_t eos_token_id) : vocab_(vocab_size), eos_(eos_token_id) {}

  // Plan steps 1 and the penalty bookkeeping of its spans: drops finished sequences, registers
  // new ones, counts newly scheduled output tokens.
  void BeginStep(const StepPlan& plan);
  // Draws the token of `s` (s.sample) from `logits_row` ([vocab]) into `out`.
  void Draw(const StepPlan& plan, const ScheduledSequence& s, const float* logits_row,
            SequenceResult* out);
  size_t num_sequences() const { return sequences_.size(); }

 private:
  struct SequenceState {
    SamplingParams params;
    uint64_t seed = 0;
    int64_t prompt_len = 0;
    int64_t outputs_seen = 0;  // output tokens counted into penalties
    bool counts_outputs = false;
    PenaltyState penalties;
  };
  void Register(const StepPlan& plan, const NewSequence& s);
  void CountOutputs(const StepPlan& plan, const ScheduledSequence& s);
  // Disallowed tokens of row_ to -inf; if none is allowed, EOS alone is left.
  void MaskRow(std::span<const uint64_t> words);

  int64_t vocab_;
  int32_t eos_;
  std::unordered_map<uint64_t, SequenceState> sequences_;
  Sampler sampler_;
  std::vector<float> row_;  // [vocab] scratch: the row being drawn from
};

}  // namespace k3::engine
