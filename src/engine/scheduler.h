// The step scheduler: each step runs one forward pass over a batch that mixes one decode token per
// running sequence with chunks of prefill, under a token budget. Single-threaded; the Engine
// wraps it with a thread and a request inbox.
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
// Prefill chunks end exactly at state checkpoint positions (interval multiples and the last block
// boundary of the prompt) so the KDA state can be copied into a checkpoint slot after the step.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "cache/kv_events.h"
#include "cache/prefix_cache.h"
#include "engine/engine_config.h"
#include "engine/mask_worker.h"
#include "engine/model_runner.h"
#include "engine/sampler.h"
#include "engine/sequence.h"

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
  Scheduler(ModelRunner* runner, const EngineConfig& config, const CacheLayout& layout,
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
  void Abort(uint64_t id);
  bool HasWork() const { return !running_.empty() || !waiting_.empty(); }
  // Schedules and runs one step. A runner failure finishes the step's sequences with kError.
  base::Status Step();

  const StepStats& last_step() const { return last_step_; }
  SchedulerCounters counters() const;
  const CacheLayout& layout() const { return layout_; }
  const cache::PrefixCache& prefix_cache() const { return cache_; }

 private:
  struct Scheduled {
    Sequence* seq;
    int64_t tokens;
  };

  // scheduler.cc: building the batch.
  std::vector<Scheduled> Schedule();
  void ScheduleRunning(bool decodes, int64_t* budget, std::vector<Scheduled>* plan);
  void AdmitWaiting(int64_t* budget, std::vector<Scheduled>* plan);
  bool Admit(Sequence* seq, int64_t budget, std::vector<Scheduled>* plan);
  int64_t ChunkEnd(Sequence* seq, int64_t n);
  bool EnsureBlocks(Sequence* seq, int64_t tokens);
  Sequence* NewestUnscheduled(const std::vector<Scheduled>& plan) const;
  void Preempt(Sequence* seq);
  void ReleaseResources(Sequence* seq);
  void EnsureHashes(Sequence* seq, size_t full_blocks);
  bool IsCheckpointTarget(const Sequence& seq, int64_t position) const;
  bool NeedsCheckpoint(Sequence* seq, int64_t position);

  // scheduler_update.cc: after the forward pass.
  void Update(const std::vector<Scheduled>& plan, const std::vector<float>& logits);
  void CommitFullBlocks(Sequence* seq);
  void MaybeCheckpoint(Sequence* seq);
  void AppendToken(Sequence* seq, const float* logits_row);
  // Grammar masks: applied to row_ before sampling; computed ahead on mask_worker_.
  void ConstrainRow(Sequence* seq);
  void PrefetchMasks();
  void WaitForMasks() { mask_worker_.Wait(); }
  void Finish(Sequence* seq, FinishReason reason, RequestOutput output);
  int64_t TokensLeft(const Sequence& seq) const;
  void MaskRow(const structured::TokenSet& mask);  // disallowed tokens of row_ to -inf
  // The next-token mask of a constrained sequence (budget-aware unless the request opted out).
  void FillSequenceMask(Sequence* seq) const;
  void Emit(Sequence* seq, RequestOutput& output);
  RequestOutput NewOutput(const Sequence& seq) const;

  ModelRunner* runner_;
  EngineConfig config_;
  CacheLayout layout_;
  RunnerInfo info_;
  bool use_checkpoints_;
  cache::PrefixCache cache_;
  std::vector<int> free_slots_;
  std::unordered_map<uint64_t, std::unique_ptr<RequestState>> requests_;
  std::unordered_map<Sequence*, std::unique_ptr<Sequence>> sequences_;
  std::map<uint64_t, Sequence*> waiting_, running_;  // by arrival order
  uint64_t next_order_ = 0;
  Sampler sampler_;
  std::vector<float> logits_;
  std::vector<float> row_;
  std::vector<Sequence*> mask_queue_;  // constrained sequences that will sample next step
  MaskWorker mask_worker_;             // last member: stops before the sequences go
  StepStats last_step_;
  SchedulerCounters totals_;
};

}  // namespace k3::engine
