// EngineCore: one scheduler and one executor, and the step that joins them:
//   plan = Schedule(); Forward(plan); CompleteMasks(); Sample(plan, result); Update(plan, result)
// Single-threaded: Engine (engine.h) runs it on its thread; tests and benchmarks drive it
// directly. The grammar masks of a step are computed on the scheduler's mask worker while the
// executor runs the forward pass.
#pragma once

#include <memory>

#include "cache/kv_events.h"
#include "engine/engine_config.h"
#include "engine/executor.h"
#include "engine/scheduler.h"
#include "engine/step_plan.h"

namespace k3::engine {

class EngineCore {
 public:
  // The executor's cache must already be allocated for `layout`.
  EngineCore(std::unique_ptr<Executor> executor, const EngineConfig& config,
             const CacheLayout& layout, cache::KvEventChannel* events);

  // Plans the cache for the executor's model (PlanCache), allocates it and builds the core.
  static base::Result<std::unique_ptr<EngineCore>> Create(std::unique_ptr<Executor> executor,
                                                          const EngineConfig& config,
                                                          cache::KvEventChannel* events);

  // Runs one step (nothing when no sequence can run). A failed step finishes its sequences with
  // kError and returns the error.
  base::Status Step();
  Scheduler& scheduler() { return scheduler_; }
  const Scheduler& scheduler() const { return scheduler_; }
  Executor& executor() { return *executor_; }
  const RunnerInfo& info() const { return info_; }

 private:
  std::unique_ptr<Executor> executor_;
  RunnerInfo info_;
  Scheduler scheduler_;
  StepResult result_;  // reused across steps
};

}  // namespace k3::engine
