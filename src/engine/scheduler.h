// The step scheduler: decides each step's StepPlan (engine/step_plan.h) — one decode token per
// running sequence plus chunks of prefill, under a token budget — and applies the executor's
// StepResult. It never runs the model or samples; EngineCore (engine_core.h) drives
// Schedule -> Executor::Forward -> CompleteMasks -> Executor::Sample -> Update. Single-threaded
// (plus the mask worker, which it joins before touching a sequence the worker reads).
//
// Policy (FCFS with recompute preemption):
// 1. every running sequence that is decoding gets its token (max_batched_tokens >= max_running,
//    so decodes are never starved by prefill);
// 2. running prefills get chunks, oldest first, from what is left of the budget;
// 3. waiting sequences are admitted oldest first (preempted ones keep their original place) while
//    slots, budget and blocks last, starting from their longest usable prefix-cache hit.
// When blocks run out, the newest running sequence not yet in this step's batch is preempted: its
// blocks and slot are freed and it is recomputed later. The oldest sequence therefore always makes
// progress, and a sequence that fits the cache alone always finishes.
// Where chunks end and where state checkpoints go is the cache's policy (cache/hybrid_cache.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "cache/hybrid_cache.h"
#include "cache/kv_events.h"
#include "engine/engine_config.h"
#include "engine/mask_worker.h"
#include "engine/model_runner.h"
#include "engine/sequence.h"
#include "engine/step_plan.h"

namespace k3::engine {

struct StepStats {
  int scheduled_tokens = 0;
  int decode_sequences = 0;
  int prefill_sequences = 0;
  int preempted = 0;
  double schedule_seconds = 0, forward_seconds = 0, update_seconds = 0;
};

struct SchedulerCounters {
  int64_t waiting = 0, running = 0;
  int64_t prompt_tokens = 0, cached_prompt_tokens = 0;
  int64_t prefill_tokens = 0, generated_tokens = 0;
  int64_t preemptions = 0, finished = 0, steps = 0;
  int free_running_slots = 0;
  cache::PrefixCacheStats cache;
};

class Scheduler {
 public:
  Scheduler(const RunnerInfo& info, const EngineConfig& config, const CacheLayout& layout,
            cache::KvEventChannel* events);
  ~Scheduler();

  // Checks token ids, lengths and sampling parameters. Reads only immutable settings, so any
  // thread may call it.
  base::Status Validate(const EngineRequest& request) const;
  // Validates the request, checks queue space and queues its n sequences. INVALID_ARGUMENT /
  // RESOURCE_EXHAUSTED; nothing is queued then.
  base::Status Add(uint64_t id, EngineRequest request);
  std::vector<uint64_t> LiveRequestIds() const;
  // Frees every block and slot of the request now and reports kCancelled. Unknown ids are ignored.
  // Not between Schedule and Update.
  void Abort(uint64_t id);
  bool HasWork() const { return !running_.empty() || !waiting_.empty(); }

  // Plans the next step (empty when there is nothing to run). The plan is the scheduler's; it
  // stays valid until the next Schedule. Its grammar masks are computed on the mask worker from
  // here on: read them only after CompleteMasks.
  const StepPlan& Schedule();
  void CompleteMasks();
  // Applies the executor's result of the current plan: commits the computed tokens to the cache
  // (only those the result confirms), saves state checkpoints, appends the sampled tokens, emits
  // outputs and finishes sequences. A failed result finishes the plan's sequences with kError.
  void Update(const StepPlan& plan, const StepResult& result);

  const StepStats& last_step() const { return last_step_; }
  StepStats& mutable_last_step() { return last_step_; }
  SchedulerCounters counters() const;
  const CacheLayout& layout() const { return layout_; }
  const cache::PrefixCache& prefix_cache() const { return cache_.prefix(); }

 private:
  struct Scheduled {
    Sequence* seq;
    int64_t tokens;
  };

  // scheduler.cc: choosing the batch.
  void ScheduleRunning(bool decodes, int64_t* budget);
  void AdmitWaiting(int64_t* budget);
  bool Admit(Sequence* seq, int64_t budget);
  bool EnsureBlocks(Sequence* seq, int64_t tokens);
  Sequence* NewestUnscheduled() const;
  void Preempt(Sequence* seq);
  void ReleaseResources(Sequence* seq);

  // scheduler_plan.cc: writing the plan.
  void WritePlan();
  void WriteSequence(const Scheduled& s);
  void WriteSampling(Sequence* seq, ScheduledSequence* row);
  void Register(Sequence* seq);
  // Grammar masks of the plan's constrained rows, on mask_worker_.
  void StartMasks();
  void FillRowMasks(Sequence* seq, int32_t mask_row, int32_t fallback_row);
  void WaitForMasks() { mask_worker_.Wait(); }
  int64_t TokensLeft(const Sequence& seq) const;

  // scheduler_update.cc: after the step.
  void UpdateSequence(Sequence* seq, const ScheduledSequence& row, const SequenceResult& result);
  void AppendToken(Sequence* seq, const ScheduledSequence& row, const SequenceResult& result);
  void FailStep(const base::Status& status);
  void Finish(Sequence* seq, FinishReason reason, RequestOutput output);
  void Emit(Sequence* seq, RequestOutput& output);
  RequestOutput NewOutput(const Sequence& seq) const;

  EngineConfig config_;
  CacheLayout layout_;
  RunnerInfo info_;
  cache::HybridCache cache_;
  std::vector<int> free_slots_;
  std::unordered_map<uint64_t, std::unique_ptr<RequestState>> requests_;
  std::unordered_map<Sequence*, std::unique_ptr<Sequence>> sequences_;
  std::map<uint64_t, Sequence*> waiting_, running_;  // by arrival order
  uint64_t next_order_ = 0;
  uint64_t next_seq_id_ = 1;

  // The current step: the sequences chosen, in plan order, and the plan written from them.
  std::vector<Scheduled> scheduled_;
  StepPlan plan_;
  std::vector<uint64_t> finished_ids_;  // registered sequences finished since the last plan
  struct MaskJob {
    Sequence* seq;
    int32_t mask_row, fallback_row;
  };
  std::vector<MaskJob> mask_jobs_;

  MaskWorker mask_worker_;  // last member but the stats: stops before the sequences go
  StepStats last_step_;
  SchedulerCounters totals_;
};

}  // namespace k3::engine
