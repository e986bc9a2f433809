// The executor's steady-state decode step allocates nothing: LocalExecutor over K3ModelRunner on
// each family's tiny checkpoint, three sequences sampled at temperature 1 with top-p, one under a
// grammar mask row, penalties off; after two warm-up decode steps, Forward + Sample of further
// decode steps (the model's forward pass, the state copies' bookkeeping, the masked seeded draws)
// make no heap allocation in any thread (testing/allocation_counter.h).
#include <gtest/gtest.h>

#include <numeric>

#include "engine/k3_model_runner.h"
#include "engine/local_executor.h"
#include "model/model_test_util.h"
#include "testing/allocation_counter.h"

namespace k3::engine {
namespace {

constexpr int kSeqs = 3, kBlockSize = 16, kBlocksPerSeq = 4;

// A prefill plan of three sequences, one block range each, all sampling.
StepPlan PrefillPlan(int64_t vocab) {
  StepPlan plan;
  SamplingParams params;
  params.temperature = 1.0;
  params.top_p = 0.9;
  plan.masks.words_per_row = (vocab + 63) / 64;
  plan.masks.words.assign(static_cast<size_t>(plan.masks.words_per_row), ~uint64_t{0});
  plan.masks.words[0] = 0;  // the first 64 ids are not allowed
  plan.masks.active = {1};
  for (int s = 0; s < kSeqs; ++s) {
    ScheduledSequence row;
    row.seq_id = static_cast<uint64_t>(s + 1);
    row.state_slot = s;
    row.token_offset = static_cast<int32_t>(plan.token_ids.size());
    row.num_tokens = 5 + 7 * s;
    for (int t = 0; t < row.num_tokens; ++t) plan.token_ids.push_back((s * 31 + t * 7) % 64 + 64);
    row.block_offset = static_cast<int32_t>(plan.block_ids.size());
    row.num_blocks = kBlocksPerSeq;
    for (int b = 0; b < kBlocksPerSeq; ++b) plan.block_ids.push_back(s * kBlocksPerSeq + b);
    row.num_logit_rows = 1;
    row.sample = true;
    row.mask_row = s == 1 ? 0 : -1;
    plan.sequences.push_back(row);
    plan.new_sequences.push_back({.seq_id = row.seq_id,
                                  .params = params,
                                  .seed = static_cast<uint64_t>(7 + s),
                                  .prompt_len = row.num_tokens});
  }
  return plan;
}

// Turns `plan` (any step) into the next decode step in place: each sequence feeds its sampled
// token. No buffer of the plan changes size.
void NextDecode(const StepResult& result, StepPlan* plan) {
  const bool first = !plan->new_sequences.empty();
  plan->new_sequences.clear();
  if (first) plan->token_ids.resize(kSeqs);
  for (int s = 0; s < kSeqs; ++s) {
    ScheduledSequence& row = plan->sequences[static_cast<size_t>(s)];
    row.start_position += row.num_tokens;
    row.token_offset = s;
    row.num_tokens = 1;
    ++row.sample_step;
    plan->token_ids[static_cast<size_t>(s)] = result.sequences[static_cast<size_t>(s)].token.token;
  }
}

class ExecutorAllocationTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExecutorAllocationTest, SteadyStateDecodeStepsAllocateNothing) {
  base::ThreadPool pool(2);
  auto model = model::Model::Load(model::testing::FamilyDir(GetParam()) + "/model", &pool);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const int64_t vocab = (*model)->config().vocab;
  LocalExecutor executor(std::make_unique<K3ModelRunner>(std::move(model).value()));
  ASSERT_TRUE(executor.AllocateCache(kSeqs * kBlocksPerSeq, kBlockSize, kSeqs).ok());
  StepPlan plan = PrefillPlan(vocab);
  StepResult result;
  executor.Execute(plan, &result);
  ASSERT_TRUE(result.status.ok()) << result.status.ToString();
  for (int warm = 0; warm < 2; ++warm) {
    NextDecode(result, &plan);
    executor.Execute(plan, &result);
    ASSERT_TRUE(result.status.ok());
  }
  ::k3::testing::StartCountingAllocations();
  bool ok = true;
  for (int step = 0; step < 8; ++step) {
    NextDecode(result, &plan);
    executor.Execute(plan, &result);
    ok = ok && result.status.ok();
  }
  const int64_t allocations = ::k3::testing::StopCountingAllocations();
  ASSERT_TRUE(ok);
  EXPECT_EQ(allocations, 0) << "heap allocations in 8 steady-state executor decode steps";
  for (const SequenceResult& r : result.sequences) {
    EXPECT_TRUE(r.sampled);
    EXPECT_GE(r.token.token, 0);
  }
  EXPECT_GE(result.sequences[1].token.token, 64);  // the mask held
}

INSTANTIATE_TEST_SUITE_P(Families, ExecutorAllocationTest,
                         ::testing::Values("k3", "kimi_linear", "k2"));

}  // namespace
}  // namespace k3::engine
