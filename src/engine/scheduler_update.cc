// The second half of a step: record what the executor computed, offer full blocks and state
// checkpoints to the prefix cache, append the sampled tokens, and finish sequences.
#include <algorithm>
#include <chrono>
#include <limits>

#include "base/check.h"
#include "base/log.h"
#include "engine/scheduler.h"

namespace k3::engine {

const char* FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone:
      return "none";
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
    case FinishReason::kError:
      return "error";
  }
  return "?";
}

void Scheduler::Update(const StepPlan& plan, const StepResult& result) {
  WaitForMasks();
  const auto start = std::chrono::steady_clock::now();
  K3_CHECK(&plan == &plan_ && scheduled_.size() == plan.sequences.size())
      << "Update takes the result of the current plan";
  if (!result.status.ok()) {
    FailStep(result.status);
  } else {
    K3_CHECK(result.sequences.size() == scheduled_.size()) << "result/plan size mismatch";
    for (size_t i = 0; i < scheduled_.size(); ++i) {
      UpdateSequence(scheduled_[i].seq, plan.sequences[i], result.sequences[i]);
    }
  }
  scheduled_.clear();
  last_step_.update_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Scheduler::UpdateSequence(Sequence* seq, const ScheduledSequence& row,
                               const SequenceResult& result) {
  const int64_t planned_end = row.start_position + row.num_tokens;
  seq->computed += result.num_computed_tokens;
  if (seq->computed <= seq->prompt_len) totals_.prefill_tokens += result.num_computed_tokens;
  cache_.CommitBlocks(seq->view(), seq->blocks, seq->computed, &seq->committed);
  if (seq->pending_checkpoint >= 0) {
    // The slot holds the state after the planned chunk only if all of it was computed.
    if (seq->computed == planned_end) {
      cache_.ConfirmCheckpoint(seq->view(), planned_end, seq->pending_checkpoint);
    } else {
      cache_.CancelCheckpoint(seq->view(), planned_end, seq->pending_checkpoint);
    }
    seq->pending_checkpoint = -1;
  }
  if (!result.sampled) return;
  K3_CHECK(seq->computed == static_cast<int64_t>(seq->tokens.size())) << "sampled mid-prompt";
  if (seq->index == 0) seq->request->prompt_cached = true;
  AppendToken(seq, row, result);
}

// The executor computed nothing: every sequence of the step ends with the error, and the
// checkpoints reserved for it go back.
void Scheduler::FailStep(const base::Status& status) {
  for (size_t i = 0; i < scheduled_.size(); ++i) {
    Sequence* seq = scheduled_[i].seq;
    if (seq->pending_checkpoint >= 0) {
      const ScheduledSequence& row = plan_.sequences[i];
      cache_.CancelCheckpoint(seq->view(), row.start_position + row.num_tokens,
                              seq->pending_checkpoint);
      seq->pending_checkpoint = -1;
    }
    RequestOutput out = NewOutput(*seq);
    out.error = status;
    Finish(seq, FinishReason::kError, std::move(out));
  }
}

RequestOutput Scheduler::NewOutput(const Sequence& seq) const {
  RequestOutput out;
  out.request_id = seq.request->id;
  out.index = seq.index;
  out.prompt_tokens = seq.prompt_len;
  out.cached_tokens = seq.cached_tokens;
  out.generated_tokens = seq.generated;
  return out;
}

void Scheduler::AppendToken(Sequence* seq, const ScheduledSequence& row,
                            const SequenceResult& result) {
  const SamplingParams& params = seq->request->params;
  if (row.mask_row >= 0) seq->closed_by_budget |= seq->mask_closing;
  SampledToken sampled = result.token;
  // A draw that would leave no room to finish the grammar within max_tokens: the executor's
  // second draw (same seed) among the tokens of the shortest way to finish replaces it.
  if (result.has_fallback &&
      !seq->matcher->FitsBudget(sampled.token,
                                static_cast<size_t>(std::max<int64_t>(1, TokensLeft(*seq))))) {
    sampled = result.fallback;
    seq->closed_by_budget = true;
  }
  const int32_t token = sampled.token;
  // A scripted token outside the grammar ends the constraint for this sequence (tests only).
  if (seq->matcher && !seq->matcher->Accept(token)) seq->matcher.reset();
  const bool grammar_complete = seq->matcher && seq->matcher->Finished();
  seq->tokens.push_back(token);
  ++seq->generated;
  ++totals_.generated_tokens;

  RequestOutput out = NewOutput(*seq);
  out.tokens.push_back(token);
  out.grammar_complete = grammar_complete;
  if (params.logprobs >= 0) out.logprobs.push_back(std::move(sampled));
  const bool stop_id = std::find(params.stop_token_ids.begin(), params.stop_token_ids.end(),
                                 token) != params.stop_token_ids.end();
  if (stop_id || (!params.ignore_eos && token == info_.eos_token_id)) {
    // An output the budget made end early is complete, but shaped by max_tokens: say so.
    const bool budget_shaped = grammar_complete && seq->closed_by_budget;
    Finish(seq, budget_shaped ? FinishReason::kLength : FinishReason::kStop, std::move(out));
  } else if (seq->generated >= params.max_tokens ||
             static_cast<int64_t>(seq->tokens.size()) >= layout_.max_model_len) {
    Finish(seq, FinishReason::kLength, std::move(out));
  } else {
    Emit(seq, out);
  }
}

void Scheduler::Emit(Sequence* seq, RequestOutput& output) {
  if (seq->request->on_output) seq->request->on_output(output);
}

void Scheduler::Finish(Sequence* seq, FinishReason reason, RequestOutput output) {
  ReleaseResources(seq);
  (seq->state == SequenceState::kRunning ? running_ : waiting_).erase(seq->order);
  output.finish_reason = reason;
  output.generated_tokens = seq->generated;
  ++totals_.finished;
  if (seq->registered) finished_ids_.push_back(seq->id);  // the executor forgets it next plan
  RequestState* request = seq->request;
  if (seq->index == 0) request->prompt_cached = true;  // never leave siblings waiting on it
  std::erase(request->sequences, seq);
  Emit(seq, output);
  sequences_.erase(seq);
  if (--request->unfinished == 0) requests_.erase(request->id);
}

}  // namespace k3::engine
