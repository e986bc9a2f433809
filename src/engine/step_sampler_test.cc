// StepSampler: the executor-side sampling state learns output tokens from the plans' spans,
// exactly once each (a recomputed sequence reschedules earlier positions), and draws what the
// Sampler draws with the same penalties, seed and step.
#include "engine/step_sampler.h"

#include <gtest/gtest.h>

#include <vector>

namespace k3::engine::step_sampler_test {
namespace {

constexpr int64_t kVocab = 32;

// A plan with one sequence scheduling `tokens` at `start`, sampling from its last row.
StepPlan PlanOf(uint64_t id, int64_t start, std::vector<int32_t> tokens) {
  StepPlan plan;
  ScheduledSequence s;
  s.seq_id = id;
  s.start_position = start;
  s.num_tokens = static_cast<int32_t>(tokens.size());
  s.num_logit_rows = 1;
  s.sample = true;
  plan.token_ids = std::move(tokens);
  plan.sequences.push_back(s);
  return plan;
}

std::vector<float> Logits() {
  std::vector<float> logits(kVocab);
  for (int64_t i = 0; i < kVocab; ++i) logits[i] = static_cast<float>((i * 7) % 11) * 0.3f;
  return logits;
}

TEST(StepSampler, CountsEachOutputTokenOnceAcrossRecomputation) {
  SamplingParams params;
  params.temperature = 0;
  params.presence_penalty = 1.5;
  params.frequency_penalty = 0.7;
  params.repetition_penalty = 1.2;
  StepSampler sampler(kVocab, kVocab - 1);
  StepPlan first = PlanOf(1, 0, {3, 4, 5});
  first.prompt_ids = {3, 4, 5};
  first.new_sequences.push_back(
      {.seq_id = 1, .params = params, .seed = 9, .prompt_len = 3, .num_prompt_ids = 3});
  sampler.BeginStep(first);
  // Outputs 6 and 6 decoded one at a time, then the sequence is recomputed from position 0.
  sampler.BeginStep(PlanOf(1, 3, {6}));
  sampler.BeginStep(PlanOf(1, 4, {6}));
  StepPlan recompute = PlanOf(1, 0, {3, 4, 5, 6, 6, 8});
  sampler.BeginStep(recompute);
  const std::vector<float> logits = Logits();
  SequenceResult got;
  sampler.Draw(recompute, recompute.sequences[0], logits.data(), &got);

  PenaltyState penalties;
  penalties.prompt_tokens = {3, 4, 5};
  for (int32_t t : {6, 6, 8}) penalties.AddOutput(t);
  std::vector<float> row = logits;
  recompute.sequences[0].sample_step = 0;
  Sampler reference;
  const SampledToken want = reference.Sample(row, params, penalties, 9, 0);
  EXPECT_TRUE(got.sampled);
  EXPECT_EQ(got.token.token, want.token);
  EXPECT_FALSE(got.has_fallback);
}

TEST(StepSampler, MasksForcedTokensAndFallbacks) {
  SamplingParams params;
  params.temperature = 0;
  StepSampler sampler(kVocab, kVocab - 1);
  StepPlan plan = PlanOf(2, 0, {1});
  plan.new_sequences.push_back({.seq_id = 2, .params = params, .seed = 1, .prompt_len = 1});
  plan.masks.words_per_row = 1;
  plan.masks.words = {uint64_t{1} << 5 | uint64_t{1} << 6, uint64_t{1} << 5, 0};
  plan.masks.active = {1, 1, 1};
  plan.sequences[0].mask_row = 0;
  plan.sequences[0].fallback_mask_row = 1;
  sampler.BeginStep(plan);
  const std::vector<float> logits = Logits();  // among 5 and 6, 6 is larger (6*7%11 = 9)
  SequenceResult got;
  sampler.Draw(plan, plan.sequences[0], logits.data(), &got);
  EXPECT_EQ(got.token.token, 6);
  ASSERT_TRUE(got.has_fallback);
  EXPECT_EQ(got.fallback.token, 5);    // the completion mask's token, drawn on the same row
  plan.sequences[0].forced_token = 9;  // a scripted token bypasses masks and fallbacks
  sampler.Draw(plan, plan.sequences[0], logits.data(), &got);
  EXPECT_EQ(got.token.token, 9);
  EXPECT_FALSE(got.has_fallback);
  plan.sequences[0].forced_token = -1;
  plan.sequences[0].mask_row = 2;  // an empty mask: EOS alone
  plan.sequences[0].fallback_mask_row = -1;
  sampler.Draw(plan, plan.sequences[0], logits.data(), &got);
  EXPECT_EQ(got.token.token, kVocab - 1);
}

}  // namespace
}  // namespace k3::engine::step_sampler_test
