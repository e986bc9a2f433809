// The threaded Engine around the scheduler, with the fake runner: submissions and cancellations
// from other threads, clear errors at Submit, and nothing held afterwards.
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "engine/fake_model_runner.h"

namespace k3::engine {
namespace {

EngineConfig Config() {
  EngineConfig c;
  c.block_size = 4;
  c.max_running = 8;
  c.max_batched_tokens = 64;
  c.cache_memory_bytes = 256 * 4 * 64 + 8 * 1024 + 32 * 1024;
  return c;
}

TEST(Engine, ThreadedSubmitAndCancelLeaveNothingBehind) {
  auto engine = Engine::Create(std::make_unique<testing::FakeModelRunner>(), Config());
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  e.Start();
  std::mutex mutex;
  std::condition_variable cv;
  std::map<uint64_t, FinishReason> finished;
  auto on_output = [&](const RequestOutput& o) {
    if (!o.finished()) return;
    std::lock_guard lock(mutex);
    finished[o.request_id] = o.finish_reason;
    cv.notify_all();
  };
  std::vector<uint64_t> ids[2];
  std::vector<std::thread> clients;
  for (int t = 0; t < 2; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        SamplingParams p;
        p.temperature = 0;
        p.max_tokens = 40;
        p.ignore_eos = true;
        auto id = e.Submit({std::vector<int32_t>(10 + i, t + 1), p, on_output});
        ASSERT_TRUE(id.ok());
        ids[t].push_back(*id);
        if (i % 5 == 0) e.Cancel(*id);
      }
    });
  }
  for (auto& c : clients) c.join();
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(
        cv.wait_for(lock, std::chrono::seconds(60), [&] { return finished.size() == 100; }));
  }
  int cancelled = 0;
  for (auto& [id, reason] : finished) {
    EXPECT_TRUE(reason == FinishReason::kCancelled || reason == FinishReason::kLength) << id;
    cancelled += reason == FinishReason::kCancelled;
  }
  EXPECT_GE(cancelled, 1);
  e.Stop();
  const EngineMetrics m = e.metrics();
  EXPECT_EQ(m.counters.cache.referenced_blocks, 0);
  EXPECT_EQ(m.counters.free_running_slots, e.layout().running_slots);
  EXPECT_EQ(m.queue_depth, 0);
}

// Before any step the metrics already say nothing is held (/metrics' k3_state_slots_in_use is
// running_slots - free_running_slots, which must read 0 on a fresh server).
TEST(Engine, MetricsOfAFreshEngineHoldNothing) {
  auto engine = Engine::Create(std::make_unique<testing::FakeModelRunner>(), Config());
  ASSERT_TRUE(engine.ok());
  const EngineMetrics m = (*engine)->metrics();
  EXPECT_GT(m.running_slots, 0);
  EXPECT_EQ(m.running_slots, (*engine)->layout().running_slots);
  EXPECT_EQ(m.counters.free_running_slots, m.running_slots);
  EXPECT_EQ(m.counters.cache.referenced_blocks, 0);
  EXPECT_EQ(m.counters.cache.free_blocks, m.num_blocks);
}

TEST(Engine, SubmitRefusesBadRequestsAtOnce) {
  auto engine = Engine::Create(std::make_unique<testing::FakeModelRunner>(), Config());
  ASSERT_TRUE(engine.ok());
  SamplingParams p;
  p.temperature = 3;
  auto bad = (*engine)->Submit({{1, 2, 3}, p, nullptr});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("temperature"), std::string::npos);
  p.temperature = 1;
  p.max_tokens = 1 << 30;
  bad = (*engine)->Submit({{1, 2, 3}, p, nullptr});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("maximum context length"), std::string::npos);
}

TEST(Engine, TooSmallCacheIsExplained) {
  EngineConfig c = Config();
  c.cache_memory_bytes = 4096;
  auto engine = Engine::Create(std::make_unique<testing::FakeModelRunner>(), c);
  ASSERT_FALSE(engine.ok());
  EXPECT_NE(engine.status().message().find("too small"), std::string::npos);
}

TEST(Engine, DestructionEndsUnfinishedRequests) {
  std::atomic<int> cancelled{0};
  {
    auto engine = Engine::Create(std::make_unique<testing::FakeModelRunner>(), Config());
    ASSERT_TRUE(engine.ok());
    SamplingParams p;
    p.max_tokens = 10;
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE((*engine)
                      ->Submit({{1, 2, 3},
                                p,
                                [&](const RequestOutput& o) {
                                  cancelled += o.finish_reason == FinishReason::kCancelled;
                                }})
                      .ok());
    }
  }
  EXPECT_EQ(cancelled.load(), 3);
}

}  // namespace
}  // namespace k3::engine
