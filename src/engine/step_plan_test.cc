// The step contract (step_plan.h): plans are self-contained plain data, only the rows a step needs
// get logits, state copies are in the plan, failed steps commit nothing and leak nothing, and the
// executor forgets finished sequences.
#include "engine/step_plan.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/scheduler_test_util.h"

namespace k3::engine {
namespace {

using testing::Greedy;
using testing::Harness;
using testing::RandomTokens;
using testing::ReferenceGreedy;
using testing::SmallConfig;

// Runs a deep copy of every plan (so nothing may point into scheduler state), keeps the copies,
// and fails the step numbered fail_at (0-based), if any, without running it.
class CopyingExecutor : public Executor {
 public:
  CopyingExecutor(std::unique_ptr<Executor> inner, int fail_at)
      : inner_(std::move(inner)), fail_at_(fail_at) {}
  RunnerInfo info() const override { return inner_->info(); }
  base::Status AllocateCache(int blocks, int block_size, int slots) override {
    return inner_->AllocateCache(blocks, block_size, slots);
  }
  base::Status Forward(const StepPlan& plan) override {
    plans.push_back(plan);
    failed_ = static_cast<int>(plans.size()) - 1 == fail_at_;
    if (failed_) return base::Internal("injected failure");
    return inner_->Forward(plans.back());
  }
  void Sample(const StepPlan& plan, StepResult* result) override {
    if (failed_) {
      result->status = base::Internal("injected failure");
      result->sequences.assign(plan.sequences.size(), SequenceResult{});
      return;
    }
    plans.back().masks = plan.masks;  // the scheduler filled them during the forward pass
    inner_->Sample(plans.back(), result);
  }
  std::vector<StepPlan> plans;

 private:
  std::unique_ptr<Executor> inner_;
  int fail_at_;
  bool failed_ = false;
};

struct CopyingHarness {
  explicit CopyingHarness(EngineConfig config, bool has_state = true, int fail_at = -1)
      : h(config, has_state, [this, fail_at](std::unique_ptr<Executor> inner) {
          auto wrapped = std::make_unique<CopyingExecutor>(std::move(inner), fail_at);
          executor = wrapped.get();
          return wrapped;
        }) {}
  CopyingExecutor* executor = nullptr;
  Harness h;
};

TEST(StepPlan, LongPromptInChunksComputesOneLogitRow) {
  EngineConfig config = SmallConfig();
  config.max_batched_tokens = 8;
  CopyingHarness c(config);
  std::mt19937_64 rng(1);
  const auto prompt = RandomTokens(rng, 45);
  ASSERT_TRUE(c.h.Add(0, prompt, Greedy(3)).ok());
  c.h.Run();
  EXPECT_EQ(c.h.Get(0, 0).tokens, ReferenceGreedy(prompt, 3));
  int chunks = 0, rows = 0;
  for (const StepPlan& plan : c.executor->plans) {
    for (const ScheduledSequence& s : plan.sequences) {
      rows += s.num_logit_rows;
      EXPECT_EQ(s.num_logit_rows, s.sample ? 1 : 0);
      EXPECT_EQ(s.num_draft_tokens, 0);
      chunks += s.start_position + s.num_tokens <= 45;
    }
  }
  EXPECT_GE(chunks, 6);  // 45 tokens under an 8-token budget
  EXPECT_EQ(rows, 3);    // one per generated token, none for the mid-prompt chunks
  EXPECT_EQ(c.h.runner_->logit_rows, 3);
  c.h.ExpectNothingHeld();
}

TEST(StepPlan, StateCopiesTravelInThePlan) {
  for (bool has_state : {true, false}) {
    CopyingHarness c(SmallConfig(), has_state);
    std::mt19937_64 rng(2);
    const auto prompt = RandomTokens(rng, 33);
    ASSERT_TRUE(c.h.Add(0, prompt, Greedy(2)).ok());
    c.h.Run();
    ASSERT_TRUE(c.h.Add(1, prompt, Greedy(2)).ok());  // hits the first one's prompt
    c.h.Run();
    int before = 0, after = 0;
    for (const StepPlan& plan : c.executor->plans) {
      before += static_cast<int>(plan.copies_before.size());
      after += static_cast<int>(plan.copies_after.size());
    }
    EXPECT_EQ(c.h.Get(1, 0).cached, 32) << has_state;
    EXPECT_EQ(c.h.Get(1, 0).tokens, ReferenceGreedy(prompt, 2));
    EXPECT_EQ(before, has_state ? 1 : 0);  // the hit restores the checkpoint at 32
    EXPECT_EQ(after, has_state ? 1 : 0);   // saved once, at the prompt's last block boundary
    EXPECT_EQ(c.h.runner_->state_copies, before + after);
    c.h.ExpectNothingHeld();
  }
}

// A step that fails finishes its sequences with kError; only tokens earlier steps confirmed are in
// the prefix cache, and no block, slot or reserved checkpoint is left behind.
TEST(StepPlan, FailedStepCommitsNothingAndLeaksNothing) {
  EngineConfig config = SmallConfig();
  config.max_batched_tokens = 8;
  config.state_checkpoint_interval = 8;
  CopyingHarness c(config, /*has_state=*/true, /*fail_at=*/2);
  std::mt19937_64 rng(3);
  ASSERT_TRUE(c.h.Add(0, RandomTokens(rng, 30), Greedy(4)).ok());
  ASSERT_TRUE(c.h.core_->Step().ok());
  ASSERT_TRUE(c.h.core_->Step().ok());
  EXPECT_FALSE(c.h.core_->Step().ok());  // the third step fails
  EXPECT_FALSE(c.h.scheduler_->HasWork());
  EXPECT_EQ(c.h.Get(0, 0).reason, FinishReason::kError);
  const auto counters = c.h.scheduler_->counters();
  EXPECT_EQ(counters.cache.idle_cached_blocks, 4);  // 16 tokens computed: 4 blocks of 4
  EXPECT_EQ(counters.cache.checkpoints, 2);         // at 8 and 16, not at 24
  c.h.ExpectNothingHeld();
}

TEST(StepPlan, ExecutorForgetsFinishedSequences) {
  Harness h(SmallConfig());
  std::mt19937_64 rng(4);
  for (uint64_t id = 0; id < 5; ++id) ASSERT_TRUE(h.Add(id, RandomTokens(rng, 9), Greedy(3)).ok());
  h.Run();
  ASSERT_TRUE(h.Add(9, RandomTokens(rng, 9), Greedy(3)).ok());
  ASSERT_TRUE(h.core_->Step().ok());
  EXPECT_EQ(h.local_->sampler().num_sequences(), 1u);  // only the one still running
  h.Run();
}

}  // namespace
}  // namespace k3::engine
