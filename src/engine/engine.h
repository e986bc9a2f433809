// The serving engine: an EngineCore (scheduler + executor) driven by one background thread, fed
// through a thread-safe inbox. Submit and Cancel may be called from any thread; outputs arrive
// through each request's callback on the engine thread. Without Start() the caller drives steps
// (RunUntilIdle), which is what benchmarks and tests do.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/result.h"
#include "cache/kv_events.h"
#include "engine/engine_config.h"
#include "engine/engine_core.h"
#include "engine/executor.h"
#include "engine/model_runner.h"

namespace k3::engine {

struct EngineMetrics {
  SchedulerCounters counters;
  int64_t queue_depth = 0;  // sequences submitted but not yet running
  int64_t num_blocks = 0, checkpoint_slots = 0;
  int64_t running_slots = 0;  // state slots of running sequences (counters.free_running_slots free)
  double cache_usage = 0;     // referenced blocks / all blocks
  double prefix_hit_rate = 0;       // cached prompt tokens / prompt tokens
  double generated_per_second = 0;  // over the last few seconds
  double busy_seconds = 0;          // total step time
  double scheduler_seconds = 0;     // of which scheduling and bookkeeping (not the forward pass)
};

class Engine {
 public:
  // Plans the cache (PlanCache), allocates it in the executor and logs the layout.
  static base::Result<std::unique_ptr<Engine>> Create(std::unique_ptr<Executor> executor,
                                                      const EngineConfig& config,
                                                      cache::KvEventChannel* events = nullptr);
  // The same over an in-process model (a LocalExecutor around `runner`).
  static base::Result<std::unique_ptr<Engine>> Create(std::unique_ptr<ModelRunner> runner,
                                                      const EngineConfig& config,
                                                      cache::KvEventChannel* events = nullptr);
  ~Engine();  // stops the thread; unfinished requests end as kCancelled

  const CacheLayout& layout() const { return layout_; }
  const RunnerInfo& info() const { return info_; }

  // Validates the request now (INVALID_ARGUMENT, RESOURCE_EXHAUSTED when the queue is full) and
  // queues it; returns its id.
  base::Result<uint64_t> Submit(EngineRequest request);
  // Frees the request's blocks and slots at the start of the next step (at once when idle).
  void Cancel(uint64_t id);

  void Start();
  void Stop();
  // Runs steps on the calling thread until no request is left (only when not started).
  base::Status RunUntilIdle();

  EngineMetrics metrics() const;

 private:
  Engine(std::unique_ptr<EngineCore> core, const EngineConfig& config);
  void Loop();
  void DrainInbox();
  base::Status StepOnce();

  std::unique_ptr<EngineCore> core_;  // engine thread only (after construction)
  Scheduler& scheduler_;
  EngineConfig config_;
  CacheLayout layout_;
  RunnerInfo info_;

  std::mutex inbox_mutex_;
  std::condition_variable inbox_ready_;
  std::deque<std::pair<uint64_t, EngineRequest>> inbox_;
  std::vector<uint64_t> cancels_;
  bool stopping_ = false;
  std::atomic<uint64_t> next_id_{1};
  std::atomic<int64_t> queued_{0};  // in the inbox or waiting in the scheduler
  std::thread thread_;

  mutable std::mutex metrics_mutex_;
  EngineMetrics metrics_;
  std::deque<std::pair<double, int64_t>> rate_window_;  // (time, generated total)
};

}  // namespace k3::engine
