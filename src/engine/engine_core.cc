#include "engine/engine_core.h"

#include <chrono>

#include "base/log.h"

namespace k3::engine {

EngineCore::EngineCore(std::unique_ptr<Executor> executor, const EngineConfig& config,
                       const CacheLayout& layout, cache::KvEventChannel* events)
    : executor_(std::move(executor)),
      info_(executor_->info()),
      scheduler_(info_, config, layout, events) {}

base::Result<std::unique_ptr<EngineCore>> EngineCore::Create(std::unique_ptr<Executor> executor,
                                                             const EngineConfig& config,
                                                             cache::KvEventChannel* events) {
  K3_ASSIGN_OR_RETURN(CacheLayout layout, PlanCache(config, executor->info()));
  K3_RETURN_IF_ERROR(executor->AllocateCache(layout.num_blocks, layout.block_size,
                                             layout.running_slots + layout.checkpoint_slots));
  return std::make_unique<EngineCore>(std::move(executor), config, layout, events);
}

base::Status EngineCore::Step() {
  const StepPlan& plan = scheduler_.Schedule();
  if (plan.empty()) return base::Status::Ok();
  const auto start = std::chrono::steady_clock::now();
  const base::Status forward = executor_->Forward(plan);
  scheduler_.CompleteMasks();
  executor_->Sample(plan, &result_);
  if (!forward.ok()) result_.status = forward;
  scheduler_.mutable_last_step().forward_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result_.status.ok()) K3_LOG(kError) << "forward pass failed: " << result_.status.ToString();
  scheduler_.Update(plan, result_);
  return result_.status;
}

}  // namespace k3::engine
