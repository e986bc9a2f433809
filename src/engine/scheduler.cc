#include "engine/scheduler.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "base/check.h"
#include "base/log.h"
#include "structured/grammar.h"

namespace k3::engine {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Scheduler::Scheduler(const RunnerInfo& info, const EngineConfig& config, const CacheLayout& layout,
                     cache::KvEventChannel* events)
    : config_(config),
      layout_(layout),
      info_(info),
      cache_({.blocks = {.num_blocks = layout.num_blocks,
                         .block_size = layout.block_size,
                         .num_checkpoint_slots = layout.checkpoint_slots,
                         .first_checkpoint_slot = layout.running_slots},
              .prefix_caching = config.enable_prefix_caching,
              .recurrent_state = info.has_recurrent_state,
              .checkpoint_interval = config.state_checkpoint_interval},
             events) {
  for (int s = layout.running_slots - 1; s >= 0; --s) free_slots_.push_back(s);
}

Scheduler::~Scheduler() { WaitForMasks(); }

base::Status Scheduler::Validate(const EngineRequest& request) const {
  if (request.prompt.empty()) return base::InvalidArgument("the prompt has no tokens");
  for (int32_t t : request.prompt) {
    if (t < 0 || t >= info_.vocab_size) {
      return base::InvalidArgument("prompt token id " + std::to_string(t) +
                                   " is outside the vocabulary [0, " +
                                   std::to_string(info_.vocab_size) + ")");
    }
  }
  K3_RETURN_IF_ERROR(request.params.Validate(info_.vocab_size));
  if (request.params.grammar &&
      request.params.grammar->vocab().size() != static_cast<size_t>(info_.vocab_size)) {
    return base::InvalidArgument("the grammar's vocabulary size differs from the model's");
  }
  const int64_t prompt = static_cast<int64_t>(request.prompt.size());
  if (prompt + request.params.max_tokens > layout_.max_model_len) {
    return base::InvalidArgument(
        "prompt (" + std::to_string(prompt) + " tokens) plus max_tokens (" +
        std::to_string(request.params.max_tokens) + ") exceeds the maximum context length of " +
        std::to_string(layout_.max_model_len) + " tokens");
  }
  return base::Status::Ok();
}

std::vector<uint64_t> Scheduler::LiveRequestIds() const {
  std::vector<uint64_t> ids;
  for (const auto& [id, request] : requests_) ids.push_back(id);
  return ids;
}

base::Status Scheduler::Add(uint64_t id, EngineRequest request) {
  if (requests_.count(id)) return base::InvalidArgument("duplicate request id");
  K3_RETURN_IF_ERROR(Validate(request));
  const int64_t prompt = static_cast<int64_t>(request.prompt.size());
  if (static_cast<int64_t>(waiting_.size()) + request.params.n > config_.max_waiting) {
    return base::ResourceExhausted("the engine queue is full (" +
                                   std::to_string(config_.max_waiting) + " waiting)");
  }
  auto state = std::make_unique<RequestState>();
  state->id = id;
  state->prompt = std::move(request.prompt);
  state->params = std::move(request.params);
  state->on_output = std::move(request.on_output);
  state->seed = state->params.seed ? *state->params.seed : std::random_device{}();
  state->unfinished = state->params.n;
  for (int i = 0; i < state->params.n; ++i) {
    auto seq = std::make_unique<Sequence>();
    seq->request = state.get();
    seq->id = next_seq_id_++;
    seq->index = i;
    seq->order = next_order_++;
    seq->tokens = state->prompt;
    seq->prompt_len = prompt;
    if (state->params.grammar) {
      seq->matcher = std::make_unique<structured::Matcher>(state->params.grammar);
    }
    waiting_[seq->order] = seq.get();
    state->sequences.push_back(seq.get());
    Sequence* key = seq.get();
    sequences_[key] = std::move(seq);
  }
  requests_[id] = std::move(state);
  return base::Status::Ok();
}

void Scheduler::Abort(uint64_t id) {
  WaitForMasks();
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  const std::vector<Sequence*> victims = it->second->sequences;  // Finish edits the original
  for (Sequence* seq : victims) Finish(seq, FinishReason::kCancelled, NewOutput(*seq));
}

const StepPlan& Scheduler::Schedule() {
  WaitForMasks();
  const auto start = std::chrono::steady_clock::now();
  last_step_ = StepStats{};
  scheduled_.clear();
  plan_.Clear();
  int64_t budget = config_.max_batched_tokens;
  ScheduleRunning(/*decodes=*/true, &budget);
  ScheduleRunning(/*decodes=*/false, &budget);
  if (last_step_.preempted == 0) AdmitWaiting(&budget);
  for (const Scheduled& s : scheduled_) {
    (s.seq->remaining() == 1 ? last_step_.decode_sequences : last_step_.prefill_sequences)++;
    last_step_.scheduled_tokens += static_cast<int>(s.tokens);
  }
  WritePlan();
  if (!plan_.empty()) ++totals_.steps;
  last_step_.schedule_seconds = SecondsSince(start);
  return plan_;
}

void Scheduler::ScheduleRunning(bool decodes, int64_t* budget) {
  std::vector<Sequence*> candidates;
  for (auto& [order, seq] : running_) {
    if ((seq->remaining() == 1) == decodes) candidates.push_back(seq);
  }
  for (Sequence* seq : candidates) {
    if (*budget == 0) return;
    if (seq->state != SequenceState::kRunning) continue;  // preempted earlier in this loop
    const int64_t n =
        cache_.AlignChunk(seq->view(), seq->computed, std::min(seq->remaining(), *budget));
    bool fits = true;
    while (!EnsureBlocks(seq, seq->computed + n)) {
      Sequence* victim = NewestUnscheduled();
      Preempt(victim);
      if (victim == seq) {
        fits = false;
        break;
      }
    }
    if (!fits) continue;
    scheduled_.push_back({seq, n});
    *budget -= n;
  }
}

void Scheduler::AdmitWaiting(int64_t* budget) {
  std::vector<Sequence*> candidates;
  for (auto& [order, seq] : waiting_) candidates.push_back(seq);
  for (Sequence* seq : candidates) {
    if (*budget == 0 || static_cast<int>(running_.size()) >= config_.max_running) return;
    if (free_slots_.empty()) return;
    // Siblings of an n > 1 request wait for sequence 0 to cache the prompt, then hit it.
    if (seq->index > 0 && config_.enable_prefix_caching && !seq->request->prompt_cached) continue;
    if (!Admit(seq, *budget)) return;
    *budget -= scheduled_.back().tokens;
  }
}

bool Scheduler::Admit(Sequence* seq, int64_t budget) {
  seq->slot = free_slots_.back();
  free_slots_.pop_back();
  const cache::PrefixMatch match = cache_.AcquirePrefix(seq->view());
  seq->blocks.assign(match.blocks.begin(), match.blocks.end());
  seq->committed = match.blocks.size();
  seq->computed = match.tokens;
  const int64_t n =
      cache_.AlignChunk(seq->view(), seq->computed, std::min(seq->remaining(), budget));
  if (!EnsureBlocks(seq, seq->computed + n)) {
    ReleaseResources(seq);
    return false;
  }
  // The state after the hit comes from its checkpoint, before the step's forward pass.
  if (match.tokens > 0 && info_.has_recurrent_state) {
    plan_.copies_before.push_back({match.checkpoint_slot, seq->slot});
  }
  if (!seq->admitted_once) {
    seq->admitted_once = true;
    seq->cached_tokens = std::min(match.tokens, seq->prompt_len);
    totals_.prompt_tokens += seq->prompt_len;
    totals_.cached_prompt_tokens += seq->cached_tokens;
  }
  waiting_.erase(seq->order);
  running_[seq->order] = seq;
  seq->state = SequenceState::kRunning;
  scheduled_.push_back({seq, n});
  return true;
}

bool Scheduler::EnsureBlocks(Sequence* seq, int64_t tokens) {
  const size_t needed = static_cast<size_t>((tokens + layout_.block_size - 1) / layout_.block_size);
  while (seq->blocks.size() < needed) {
    const int block = cache_.AllocateBlock();
    if (block < 0) return false;
    seq->blocks.push_back(block);
  }
  return true;
}

Sequence* Scheduler::NewestUnscheduled() const {
  for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
    const bool scheduled = std::any_of(scheduled_.begin(), scheduled_.end(),
                                       [&](const Scheduled& s) { return s.seq == it->second; });
    if (!scheduled) return it->second;
  }
  K3_CHECK(false) << "no sequence left to preempt";
  return nullptr;
}

void Scheduler::Preempt(Sequence* seq) {
  ReleaseResources(seq);
  running_.erase(seq->order);
  waiting_[seq->order] = seq;
  seq->state = SequenceState::kWaiting;
  ++last_step_.preempted;
  ++totals_.preemptions;
}

void Scheduler::ReleaseResources(Sequence* seq) {
  for (auto it = seq->blocks.rbegin(); it != seq->blocks.rend(); ++it) cache_.ReleaseBlock(*it);
  seq->blocks.clear();
  seq->committed = 0;
  seq->computed = 0;
  if (seq->slot >= 0) free_slots_.push_back(seq->slot);
  seq->slot = -1;
}

SchedulerCounters Scheduler::counters() const {
  SchedulerCounters c = totals_;
  c.waiting = static_cast<int64_t>(waiting_.size());
  c.running = static_cast<int64_t>(running_.size());
  c.free_running_slots = static_cast<int>(free_slots_.size());
  c.cache = cache_.stats();
  return c;
}

}  // namespace k3::engine
