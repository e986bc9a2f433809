#include "engine/engine.h"

#include <chrono>

#include "base/log.h"
#include "engine/local_executor.h"

namespace k3::engine {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

base::Result<std::unique_ptr<Engine>> Engine::Create(std::unique_ptr<Executor> executor,
                                                     const EngineConfig& config,
                                                     cache::KvEventChannel* events) {
  K3_ASSIGN_OR_RETURN(auto core, EngineCore::Create(std::move(executor), config, events));
  K3_LOG(kInfo) << "cache: " << core->scheduler().layout().ToString();
  return std::unique_ptr<Engine>(new Engine(std::move(core), config));
}

base::Result<std::unique_ptr<Engine>> Engine::Create(std::unique_ptr<ModelRunner> runner,
                                                     const EngineConfig& config,
                                                     cache::KvEventChannel* events) {
  return Create(std::make_unique<LocalExecutor>(std::move(runner)), config, events);
}

Engine::Engine(std::unique_ptr<EngineCore> core, const EngineConfig& config)
    : core_(std::move(core)),
      scheduler_(core_->scheduler()),
      config_(config),
      layout_(scheduler_.layout()),
      info_(core_->info()) {
  metrics_.num_blocks = layout_.num_blocks;
  metrics_.checkpoint_slots = layout_.checkpoint_slots;
  metrics_.running_slots = layout_.running_slots;
  metrics_.counters = scheduler_.counters();  // free slots and blocks before the first step
}

Engine::~Engine() {
  Stop();
  DrainInbox();
  // Whatever is left ends as cancelled, so every caller hears the end of its request.
  std::vector<uint64_t> ids;
  while (scheduler_.HasWork() || !ids.empty()) {
    ids = scheduler_.LiveRequestIds();
    if (ids.empty()) break;
    for (uint64_t id : ids) scheduler_.Abort(id);
  }
}

base::Result<uint64_t> Engine::Submit(EngineRequest request) {
  K3_RETURN_IF_ERROR(scheduler_.Validate(request));
  if (queued_.load() + request.params.n > config_.max_waiting) {
    return base::ResourceExhausted("the engine queue is full (" +
                                   std::to_string(config_.max_waiting) + " waiting)");
  }
  const uint64_t id = next_id_++;
  queued_ += request.params.n;
  {
    std::lock_guard lock(inbox_mutex_);
    inbox_.emplace_back(id, std::move(request));
  }
  inbox_ready_.notify_one();
  return id;
}

void Engine::Cancel(uint64_t id) {
  {
    std::lock_guard lock(inbox_mutex_);
    cancels_.push_back(id);
  }
  inbox_ready_.notify_one();
}

void Engine::Start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(inbox_mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
}

void Engine::Stop() {
  {
    std::lock_guard lock(inbox_mutex_);
    stopping_ = true;
  }
  inbox_ready_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Engine::Loop() {
  for (;;) {
    {
      std::unique_lock lock(inbox_mutex_);
      inbox_ready_.wait(lock, [&] {
        return stopping_ || !inbox_.empty() || !cancels_.empty() || scheduler_.HasWork();
      });
      if (stopping_) return;
    }
    DrainInbox();
    if (scheduler_.HasWork()) {
      base::Status status = StepOnce();
      if (!status.ok()) K3_LOG(kError) << "engine step failed: " << status.ToString();
    }
  }
}

void Engine::DrainInbox() {
  std::deque<std::pair<uint64_t, EngineRequest>> inbox;
  std::vector<uint64_t> cancels;
  {
    std::lock_guard lock(inbox_mutex_);
    inbox.swap(inbox_);
    cancels.swap(cancels_);
  }
  for (auto& [id, request] : inbox) {
    const int n = request.params.n;
    OutputCallback callback = request.on_output;
    base::Status status = scheduler_.Add(id, std::move(request));
    queued_ -= n;
    if (!status.ok() && callback) {
      RequestOutput out;
      out.request_id = id;
      out.finish_reason = FinishReason::kError;
      out.error = status;
      callback(out);
    }
  }
  for (uint64_t id : cancels) scheduler_.Abort(id);
  if (!cancels.empty()) {
    // Aborts free blocks and slots without a step; publish that now (an idle engine may not
    // step again for a long time).
    const SchedulerCounters counters = scheduler_.counters();
    std::lock_guard lock(metrics_mutex_);
    metrics_.counters = counters;
  }
}

base::Status Engine::StepOnce() {
  base::Status status = core_->Step();
  const StepStats& step = scheduler_.last_step();
  const SchedulerCounters counters = scheduler_.counters();
  const double now = Now();
  std::lock_guard lock(metrics_mutex_);
  metrics_.counters = counters;
  metrics_.busy_seconds += step.schedule_seconds + step.forward_seconds + step.update_seconds;
  metrics_.scheduler_seconds += step.schedule_seconds + step.update_seconds;
  rate_window_.emplace_back(now, counters.generated_tokens);
  while (rate_window_.size() > 2 && now - rate_window_.front().first > 5.0) {
    rate_window_.pop_front();
  }
  return status;
}

base::Status Engine::RunUntilIdle() {
  DrainInbox();
  while (scheduler_.HasWork()) {
    K3_RETURN_IF_ERROR(StepOnce());
    DrainInbox();
  }
  return base::Status::Ok();
}

EngineMetrics Engine::metrics() const {
  std::lock_guard lock(metrics_mutex_);
  EngineMetrics m = metrics_;
  const auto& c = m.counters;
  m.queue_depth = queued_.load() + c.waiting;
  if (m.num_blocks > 0) m.cache_usage = double(c.cache.referenced_blocks) / m.num_blocks;
  if (c.prompt_tokens > 0) m.prefix_hit_rate = double(c.cached_prompt_tokens) / c.prompt_tokens;
  if (rate_window_.size() >= 2) {
    const double dt = rate_window_.back().first - rate_window_.front().first;
    if (dt > 0) {
      m.generated_per_second = (rate_window_.back().second - rate_window_.front().second) / dt;
    }
  }
  return m;
}

}  // namespace k3::engine
