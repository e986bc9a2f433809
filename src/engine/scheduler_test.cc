#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "engine/scheduler_test_util.h"

namespace k3::engine {
namespace {

using testing::Collected;
using testing::Greedy;
using testing::Harness;
using testing::kVocab;
using testing::RandomTokens;
using testing::ReferenceGreedy;
using testing::SmallConfig;

TEST(Scheduler, ConcurrentGreedyRequestsMatchTheModelDefinition) {
  Harness h(SmallConfig());
  std::mt19937_64 rng(1);
  std::vector<std::vector<int32_t>> prompts;
  for (uint64_t id = 0; id < 12; ++id) {
    prompts.push_back(RandomTokens(rng, 1 + static_cast<int>(rng() % 40)));
    ASSERT_TRUE(h.Add(id, prompts.back(), Greedy(12)).ok());
  }
  h.Run();
  for (uint64_t id = 0; id < 12; ++id) {
    EXPECT_EQ(h.Get(id, 0).tokens, ReferenceGreedy(prompts[id], 12)) << id;
    EXPECT_NE(h.Get(id, 0).reason, FinishReason::kNone);
  }
  h.ExpectNothingHeld();
}

class PrefixHitTest : public ::testing::TestWithParam<std::tuple<int, bool>> {};

// Prompts sharing 0%, 50%, 99% and 100% of an earlier prompt, or extending it (the next turn of
// a chat), give the same tokens as cold; hits happen where a state checkpoint allows them.
TEST_P(PrefixHitTest, HitsGiveColdOutputs) {
  EngineConfig config = SmallConfig();
  config.state_checkpoint_interval = std::get<0>(GetParam());
  const bool has_state = std::get<1>(GetParam());
  std::mt19937_64 rng(7);
  const std::vector<int32_t> base = RandomTokens(rng, 101);
  for (double shared : {0.0, 0.5, 0.99, 1.0, 1.5}) {
    Harness h(config, has_state);
    ASSERT_TRUE(h.Add(0, base, Greedy(6)).ok());
    h.Run();
    const int keep = std::min(101, static_cast<int>(shared * 101));
    std::vector<int32_t> prompt(base.begin(), base.begin() + keep);
    const std::vector<int32_t> tail =
        RandomTokens(rng, static_cast<int>(shared * 101) - keep + 101 - keep);
    prompt.insert(prompt.end(), tail.begin(), tail.end());
    ASSERT_TRUE(h.Add(1, prompt, Greedy(6)).ok());
    h.Run();
    const Collected& got = h.Get(1, 0);
    EXPECT_EQ(got.tokens, ReferenceGreedy(prompt, 6)) << "shared " << shared;
    // Full blocks shared with the first prompt, and the deepest usable checkpoint under them.
    // (A hit leaves at least one prompt token to compute, for the logits.)
    const int64_t shared_tokens =
        std::min<int64_t>(keep, static_cast<int64_t>(prompt.size()) - 1) / 4 * 4;
    int64_t expected = 0;
    if (!has_state) {
      expected = shared_tokens;
    } else if (shared_tokens >= 100) {
      expected = 100;  // the first prompt's end (aligned down to a block)
    } else if (config.state_checkpoint_interval > 0) {
      expected =
          shared_tokens / config.state_checkpoint_interval * config.state_checkpoint_interval;
    }
    EXPECT_EQ(got.cached, expected) << "shared " << shared;
    h.ExpectNothingHeld();
  }
}

INSTANTIATE_TEST_SUITE_P(Intervals, PrefixHitTest,
                         ::testing::Combine(::testing::Values(0, 8, 32), ::testing::Bool()));

TEST(Scheduler, KvHitWithoutStateCheckpointIsNotUsed) {
  EngineConfig config = SmallConfig();
  config.checkpoint_memory_fraction = 0;  // no checkpoint slots at all
  Harness h(config);
  std::mt19937_64 rng(3);
  const auto prompt = RandomTokens(rng, 40);
  ASSERT_TRUE(h.Add(0, prompt, Greedy(4)).ok());
  h.Run();
  ASSERT_TRUE(h.Add(1, prompt, Greedy(4)).ok());
  h.Run();
  EXPECT_EQ(h.Get(1, 0).cached, 0);
  EXPECT_EQ(h.Get(1, 0).tokens, ReferenceGreedy(prompt, 4));
  EXPECT_GT(h.scheduler_->counters().cache.idle_cached_blocks, 0);  // the KV was there
}

TEST(Scheduler, PreemptedRequestsMatchUninterruptedOnes) {
  EngineConfig config = SmallConfig();
  config.max_running = 6;
  config.max_batched_tokens = 24;
  config.cache_memory_bytes = 24 * 4 * 64 + 6 * 1024 + 4 * 1024;  // 24 blocks = 96 tokens
  Harness h(config);
  std::mt19937_64 rng(5);
  std::vector<std::vector<int32_t>> prompts;
  for (uint64_t id = 0; id < 10; ++id) {
    prompts.push_back(RandomTokens(rng, 20 + static_cast<int>(rng() % 20)));
    ASSERT_TRUE(h.Add(id, prompts.back(), Greedy(30)).ok());
  }
  h.Run();
  EXPECT_GT(h.scheduler_->counters().preemptions, 0);
  for (uint64_t id = 0; id < 10; ++id) {
    EXPECT_EQ(h.Get(id, 0).tokens, ReferenceGreedy(prompts[id], 30)) << id;
  }
  h.ExpectNothingHeld();
}

TEST(Scheduler, BadRequestsAreRefusedAndNothingIsQueued) {
  Harness h(SmallConfig());
  EXPECT_EQ(h.Add(1, {}, Greedy(1)).code(), base::StatusCode::kInvalidArgument);
  EXPECT_EQ(h.Add(1, {kVocab}, Greedy(1)).code(), base::StatusCode::kInvalidArgument);
  const int64_t limit = h.scheduler_->layout().max_model_len;
  base::Status too_long = h.Add(1, std::vector<int32_t>(limit, 1), Greedy(1));
  EXPECT_EQ(too_long.code(), base::StatusCode::kInvalidArgument);
  EXPECT_NE(too_long.message().find(std::to_string(limit)), std::string::npos);
  SamplingParams bad = Greedy(1);
  bad.top_p = 0;
  EXPECT_EQ(h.Add(1, {1}, bad).code(), base::StatusCode::kInvalidArgument);
  EXPECT_FALSE(h.scheduler_->HasWork());
}

TEST(Scheduler, CancelFreesEverythingAtOnce) {
  Harness h(SmallConfig());
  std::mt19937_64 rng(9);
  ASSERT_TRUE(h.Add(1, RandomTokens(rng, 30), Greedy(50)).ok());
  ASSERT_TRUE(h.Add(2, RandomTokens(rng, 30), Greedy(50)).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(h.core_->Step().ok());
  EXPECT_GT(h.scheduler_->counters().cache.referenced_blocks, 0);
  h.scheduler_->Abort(1);
  h.scheduler_->Abort(2);
  EXPECT_FALSE(h.scheduler_->HasWork());
  EXPECT_EQ((h.Get(1, 0).reason), FinishReason::kCancelled);
  h.ExpectNothingHeld();
}

TEST(Scheduler, SeededSamplingIgnoresBatchComposition) {
  SamplingParams p;
  p.temperature = 1.0;
  p.top_p = 0.9;
  p.seed = 42;
  p.max_tokens = 20;
  std::mt19937_64 rng(11);
  const auto prompt = RandomTokens(rng, 17);
  Harness alone(SmallConfig());
  ASSERT_TRUE(alone.Add(0, prompt, p).ok());
  alone.Run();
  Harness crowded(SmallConfig());
  for (uint64_t id = 1; id < 6; ++id) ASSERT_TRUE(crowded.Add(id, RandomTokens(rng, 25), p).ok());
  ASSERT_TRUE(crowded.Add(0, prompt, p).ok());
  crowded.Run();
  EXPECT_EQ((alone.Get(0, 0).tokens), (crowded.Get(0, 0).tokens));
}

TEST(Scheduler, SiblingCompletionsShareThePromptCache) {
  SamplingParams p;
  p.temperature = 1.0;
  p.seed = 5;
  p.max_tokens = 8;
  p.n = 3;
  std::mt19937_64 rng(13);
  const auto prompt = RandomTokens(rng, 41);
  Harness h(SmallConfig());
  ASSERT_TRUE(h.Add(0, prompt, p).ok());
  h.Run();
  EXPECT_EQ((h.Get(0, 0).cached), 0);
  EXPECT_EQ((h.Get(0, 1).cached), 40);
  EXPECT_EQ((h.Get(0, 2).cached), 40);
  EXPECT_NE((h.Get(0, 1).tokens), (h.Get(0, 2).tokens));
  h.ExpectNothingHeld();
}

TEST(Scheduler, StoredAndEvictedBlocksArePublished) {
  EngineConfig config = SmallConfig();
  Harness h(config);
  int64_t stored = 0, removed = 0;
  uint64_t last = 0;
  h.events_.Subscribe([&](const cache::SequencedKvEvent& e) {
    EXPECT_EQ(e.sequence, last + 1);
    last = e.sequence;
    stored += e.event.kind == cache::KvEventKind::kBlockStored;
    removed += e.event.kind == cache::KvEventKind::kBlockRemoved;
  });
  std::mt19937_64 rng(17);
  for (uint64_t id = 0; id < 30; ++id) {
    ASSERT_TRUE(h.Add(id, RandomTokens(rng, 33), Greedy(3)).ok());
  }
  h.Run();
  const auto c = h.scheduler_->counters();
  EXPECT_EQ(stored - removed, c.cache.idle_cached_blocks);
  EXPECT_EQ(removed, c.cache.evicted_blocks);
  EXPECT_GT(removed, 0);
}

// 10,000 random requests (shared prefixes, n up to 2, random cancellations, a cache small enough
// to preempt): nothing leaks, the budget holds, nobody starves, greedy outputs stay exact.
TEST(Scheduler, RandomWorkloadKeepsEveryInvariant) {
  EngineConfig config = SmallConfig();
  config.max_running = 10;
  config.max_batched_tokens = 40;
  config.state_checkpoint_interval = 8;
  config.cache_memory_bytes = 48 * 4 * 64 + 10 * 1024 + 12 * 1024;
  Harness h(config);
  std::mt19937_64 rng(2026);
  std::vector<std::vector<int32_t>> bases;
  for (int i = 0; i < 6; ++i) bases.push_back(RandomTokens(rng, 48));
  std::map<uint64_t, std::vector<int32_t>> prompts;
  std::map<uint64_t, int64_t> submitted_step, max_tokens;
  std::set<uint64_t> cancelled;
  int64_t step = 0, worst_latency = 0;
  uint64_t next_id = 0;
  while (next_id < 10000 || h.scheduler_->HasWork()) {
    for (int k = 0; k < 3 && next_id < 10000 && h.scheduler_->counters().waiting < 40; ++k) {
      std::vector<int32_t> prompt(bases[rng() % bases.size()]);
      prompt.resize(1 + rng() % 48);
      const auto tail = RandomTokens(rng, static_cast<int>(rng() % 24));
      prompt.insert(prompt.end(), tail.begin(), tail.end());
      SamplingParams p = Greedy(1 + static_cast<int64_t>(rng() % 12));
      p.n = rng() % 8 == 0 ? 2 : 1;
      ASSERT_TRUE(h.Add(next_id, prompt, p).ok()) << h.Add(next_id, prompt, p).ToString();
      prompts[next_id] = prompt;
      max_tokens[next_id] = p.max_tokens;
      submitted_step[next_id] = step;
      ++next_id;
    }
    if (rng() % 10 == 0 && next_id > 0) {
      const uint64_t victim = rng() % next_id;
      if (!h.results.count({victim, 0}) || !h.Get(victim, 0).tokens.empty() ||
          h.Get(victim, 0).reason == FinishReason::kNone) {
        cancelled.insert(victim);
        h.scheduler_->Abort(victim);
      }
    }
    ASSERT_TRUE(h.core_->Step().ok());
    ASSERT_LE(h.scheduler_->last_step().scheduled_tokens, config.max_batched_tokens);
    ++step;
    for (auto it = submitted_step.begin(); it != submitted_step.end();) {
      const auto r = h.results.find({it->first, 0});
      if (r != h.results.end() && r->second.reason != FinishReason::kNone) {
        worst_latency = std::max(worst_latency, step - it->second);
        it = submitted_step.erase(it);
      } else {
        worst_latency = std::max(worst_latency, step - it->second);
        ++it;
      }
    }
  }
  h.ExpectNothingHeld();
  const SchedulerCounters c = h.scheduler_->counters();
  EXPECT_GT(c.preemptions, 0);
  EXPECT_GT(c.cached_prompt_tokens, 0);
  EXPECT_LT(worst_latency, 400) << "a request waited too long";
  int checked = 0;
  for (const auto& [key, got] : h.results) {
    EXPECT_EQ(got.outputs_after_finish, 0);
    if (cancelled.count(key.first)) continue;
    ASSERT_NE(got.reason, FinishReason::kNone);
    ASSERT_EQ(got.tokens, ReferenceGreedy(prompts[key.first], max_tokens[key.first]))
        << "request " << key.first << "." << key.second;
    ++checked;
  }
  EXPECT_GT(checked, 9000);
  std::printf(
      "steps %lld, preemptions %lld, cached prompt tokens %lld of %lld, worst latency "
      "%lld steps\n",
      static_cast<long long>(step), static_cast<long long>(c.preemptions),
      static_cast<long long>(c.cached_prompt_tokens), static_cast<long long>(c.prompt_tokens),
      static_cast<long long>(worst_latency));
}

// Scripted output: the forced tokens come out in order (EOS among them stops), then the sampler
// resumes; the model still runs every step.
TEST(Scheduler, ForcedTokensReplaceSampledOnesThenSamplingResumes) {
  Harness h(SmallConfig());
  SamplingParams scripted = Greedy(6);
  scripted.forced_tokens = {5, 6, 7};
  ASSERT_TRUE(h.Add(1, {1, 2, 3}, scripted).ok());
  SamplingParams stops = Greedy(10);
  stops.forced_tokens = {9, kVocab - 1, 9};  // EOS in the script ends it there
  ASSERT_TRUE(h.Add(2, {1, 2, 3}, stops).ok());
  h.Run();
  std::vector<int32_t> expected = {5, 6, 7};
  std::vector<int32_t> rest = ReferenceGreedy({1, 2, 3, 5, 6, 7}, 3);
  expected.insert(expected.end(), rest.begin(), rest.end());
  expected.resize(std::min<size_t>(expected.size(), 6));
  EXPECT_EQ(h.Get(1, 0).tokens, expected);
  EXPECT_EQ(h.Get(2, 0).tokens, (std::vector<int32_t>{9, kVocab - 1}));
  EXPECT_EQ(h.Get(2, 0).reason, FinishReason::kStop);
  SamplingParams bad = Greedy(2);
  bad.forced_tokens = {kVocab};
  EXPECT_FALSE(bad.Validate(kVocab).ok());
  h.ExpectNothingHeld();
}

}  // namespace
}  // namespace k3::engine
