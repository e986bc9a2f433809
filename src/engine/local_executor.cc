#include "engine/local_executor.h"

#include "base/check.h"

namespace k3::engine {

LocalExecutor::LocalExecutor(std::unique_ptr<ModelRunner> runner)
    : runner_(std::move(runner)),
      info_(runner_->info()),
      sampler_(info_.vocab_size, info_.eos_token_id) {}

base::Status LocalExecutor::AllocateCache(int num_blocks, int block_size, int num_state_slots) {
  return runner_->AllocateCache(num_blocks, block_size, num_state_slots);
}

base::Status LocalExecutor::Forward(const StepPlan& plan) {
  sampler_.BeginStep(plan);
  for (const StateCopy& c : plan.copies_before) runner_->CopyState(c.from_slot, c.to_slot);
  batch_.clear();
  last_row_.clear();
  int64_t rows = 0;
  for (const ScheduledSequence& s : plan.sequences) {
    batch_.push_back(
        {plan.tokens_of(s), s.start_position, s.state_slot, plan.blocks_of(s), s.num_logit_rows});
    rows += s.num_logit_rows;
    last_row_.push_back(s.num_logit_rows > 0 ? rows - 1 : -1);
  }
  forward_status_ = runner_->Forward(batch_, &logits_);
  if (forward_status_.ok()) {
    K3_CHECK(logits_.size() == static_cast<size_t>(rows * info_.vocab_size))
        << "runner returned " << logits_.size() << " logits for " << rows << " rows";
    for (const StateCopy& c : plan.copies_after) runner_->CopyState(c.from_slot, c.to_slot);
  }
  return forward_status_;
}

void LocalExecutor::Sample(const StepPlan& plan, StepResult* result) {
  result->status = forward_status_;
  result->sequences.resize(plan.sequences.size());
  for (size_t i = 0; i < plan.sequences.size(); ++i) {
    const ScheduledSequence& s = plan.sequences[i];
    SequenceResult& out = result->sequences[i];
    out.sampled = out.has_fallback = false;
    out.num_computed_tokens = forward_status_.ok() ? s.num_tokens : 0;
    if (!forward_status_.ok() || !s.sample) continue;
    K3_CHECK(last_row_[i] >= 0) << "a sampled sequence has no logit row";
    sampler_.Draw(plan, s, logits_.data() + last_row_[i] * info_.vocab_size, &out);
  }
}

}  // namespace k3::engine
