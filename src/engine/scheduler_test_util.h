// Shared by the scheduler tests: a Harness (scheduler + LocalExecutor over the checking fake
// runner), greedy references computed from the fake model's definition, small configurations.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "base/check.h"
#include "engine/engine_core.h"
#include "engine/fake_model_runner.h"
#include "engine/local_executor.h"

namespace k3::engine::testing {

constexpr int64_t kVocab = 64;

// What the fake model generates greedily, computed from its definition, not by the scheduler.
inline std::vector<int32_t> ReferenceGreedy(std::vector<int32_t> tokens, int64_t max_tokens) {
  std::vector<int32_t> out;
  std::vector<float> logits(kVocab);
  for (int64_t i = 0; i < max_tokens; ++i) {
    FakeLogits(HistoryHash(tokens), kVocab, logits.data());
    const int32_t t =
        static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    out.push_back(t);
    tokens.push_back(t);
    if (t == kVocab - 1) break;  // EOS
  }
  return out;
}

struct Collected {
  std::vector<int32_t> tokens;
  FinishReason reason = FinishReason::kNone;
  int64_t cached = 0;
  int outputs_after_finish = 0;
  bool grammar_complete = false;
};

// A scheduler and an in-process executor over the checking fake runner, stepped by hand.
class Harness {
 public:
  explicit Harness(EngineConfig config, bool has_state = true,
                   std::function<std::unique_ptr<Executor>(std::unique_ptr<Executor>)> wrap = {})
      : config_(config) {
    auto fake = std::make_unique<FakeModelRunner>(kVocab, has_state);
    runner_ = fake.get();
    std::unique_ptr<Executor> executor = std::make_unique<LocalExecutor>(std::move(fake));
    local_ = static_cast<LocalExecutor*>(executor.get());
    if (wrap) executor = wrap(std::move(executor));
    auto core = EngineCore::Create(std::move(executor), config, &events_);
    K3_CHECK(core.ok()) << core.status().ToString();
    core_ = std::move(*core);
    scheduler_ = &core_->scheduler();
  }

  base::Status Add(uint64_t id, std::vector<int32_t> prompt, SamplingParams params) {
    EngineRequest r{std::move(prompt), params, [this](const RequestOutput& o) {
                      Collected& c = results[{o.request_id, o.index}];
                      if (c.reason != FinishReason::kNone) ++c.outputs_after_finish;
                      c.tokens.insert(c.tokens.end(), o.tokens.begin(), o.tokens.end());
                      c.reason = o.finish_reason;
                      c.cached = o.cached_tokens;
                      c.grammar_complete = o.grammar_complete;
                    }};
    return scheduler_->Add(id, std::move(r));
  }

  Collected& Get(uint64_t id, int index) { return results[{id, index}]; }

  // Steps until idle, checking the budget every step.
  void Run(int max_steps = 1 << 20) {
    for (int i = 0; i < max_steps && scheduler_->HasWork(); ++i) {
      ASSERT_TRUE(core_->Step().ok());
      ASSERT_LE(scheduler_->last_step().scheduled_tokens, config_.max_batched_tokens);
    }
    ASSERT_FALSE(scheduler_->HasWork());
  }

  // Nothing held once idle: every block free or idle-cached, every running slot back.
  void ExpectNothingHeld() {
    const SchedulerCounters c = scheduler_->counters();
    EXPECT_EQ(c.cache.referenced_blocks, 0);
    EXPECT_EQ(c.free_running_slots, scheduler_->layout().running_slots);
    EXPECT_EQ(c.cache.free_blocks + c.cache.idle_cached_blocks, scheduler_->layout().num_blocks);
    EXPECT_LE(c.cache.checkpoints, scheduler_->layout().checkpoint_slots);
  }

  EngineConfig config_;
  cache::KvEventChannel events_;
  std::unique_ptr<EngineCore> core_;
  Scheduler* scheduler_ = nullptr;
  FakeModelRunner* runner_ = nullptr;  // inside local_
  LocalExecutor* local_ = nullptr;     // inside core_
  std::map<std::pair<uint64_t, int>, Collected> results;
};

inline SamplingParams Greedy(int64_t max_tokens) {
  SamplingParams p;
  p.temperature = 0;
  p.max_tokens = max_tokens;
  return p;
}

inline std::vector<int32_t> RandomTokens(std::mt19937_64& rng, int n) {
  std::vector<int32_t> t(n);
  for (auto& x : t) x = static_cast<int32_t>(rng() % (kVocab - 1));  // no EOS in prompts
  return t;
}

inline EngineConfig SmallConfig() {
  EngineConfig c;
  c.block_size = 4;
  c.max_running = 8;
  c.max_batched_tokens = 32;
  c.cache_memory_bytes = 64 * 4 * 64 + 8 * 1024 + 16 * 1024;  // ~64 blocks, 8 running slots
  c.checkpoint_memory_fraction = 0.5;
  return c;
}

}  // namespace k3::engine::testing
