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

Scheduler::Scheduler(ModelRunner* runner, const EngineConfig& config, const CacheLayout& layout,
                     cache::KvEventChannel* events)
    : runner_(runner),
      config_(config),
      layout_(layout),
      info_(runner->info()),
      use_checkpoints_(config.enable_prefix_caching && runner->info().has_recurrent_state),
      cache_({.num_blocks = layout.num_blocks,
              .block_size = layout.block_size,
              .num_checkpoint_slots = layout.checkpoint_slots,
              .first_checkpoint_slot = layout.running_slots},
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
    seq->index = i;
    seq->order = next_order_++;
    seq->tokens = state->prompt;
    seq->prompt_len = prompt;
    if (state->params.grammar) {
      seq->matcher = std::make_unique<structured::Matcher>(state->params.grammar);
    }
    if (state->params.repetition_penalty != 1.0) {
      seq->penalties.prompt_tokens = state->prompt;
      std::sort(seq->penalties.prompt_tokens.begin(), seq->penalties.prompt_tokens.end());
      seq->penalties.prompt_tokens.erase(
          std::unique(seq->penalties.prompt_tokens.begin(), seq->penalties.prompt_tokens.end()),
          seq->penalties.prompt_tokens.end());
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

base::Status Scheduler::Step() {
  last_step_ = StepStats{};
  auto start = std::chrono::steady_clock::now();
  std::vector<Scheduled> plan = Schedule();
  last_step_.schedule_seconds = SecondsSince(start);
  if (plan.empty()) return base::Status::Ok();
  ++totals_.steps;

  std::vector<RunnerSequence> batch;
  batch.reserve(plan.size());
  for (const Scheduled& s : plan) {
    Sequence* seq = s.seq;
    batch.push_back({std::span(seq->tokens).subspan(seq->computed, s.tokens), seq->computed,
                     seq->slot, seq->blocks,
                     seq->computed + s.tokens == static_cast<int64_t>(seq->tokens.size())});
    last_step_.scheduled_tokens += static_cast<int>(s.tokens);
  }
  start = std::chrono::steady_clock::now();
  base::Status status = runner_->Forward(batch, &logits_);
  last_step_.forward_seconds = SecondsSince(start);
  if (!status.ok()) {
    K3_LOG(kError) << "forward pass failed: " << status.ToString();
    for (const Scheduled& s : plan) {
      RequestOutput out = NewOutput(*s.seq);
      out.error = status;
      Finish(s.seq, FinishReason::kError, std::move(out));
    }
    return status;
  }
  start = std::chrono::steady_clock::now();
  Update(plan, logits_);
  last_step_.update_seconds = SecondsSince(start);
  return base::Status::Ok();
}

std::vector<Scheduler::Scheduled> Scheduler::Schedule() {
  std::vector<Scheduled> plan;
  int64_t budget = config_.max_batched_tokens;
  ScheduleRunning(/*decodes=*/true, &budget, &plan);
  ScheduleRunning(/*decodes=*/false, &budget, &plan);
  if (last_step_.preempted == 0) AdmitWaiting(&budget, &plan);
  for (const Scheduled& s : plan) {
    (s.seq->remaining() == 1 ? last_step_.decode_sequences : last_step_.prefill_sequences)++;
  }
  return plan;
}

void Scheduler::ScheduleRunning(bool decodes, int64_t* budget, std::vector<Scheduled>* plan) {
  std::vector<Sequence*> candidates;
  for (auto& [order, seq] : running_) {
    if ((seq->remaining() == 1) == decodes) candidates.push_back(seq);
  }
  for (Sequence* seq : candidates) {
    if (*budget == 0) return;
    if (seq->state != SequenceState::kRunning) continue;  // preempted earlier in this loop
    const int64_t n = ChunkEnd(seq, std::min(seq->remaining(), *budget));
    bool fits = true;
    while (!EnsureBlocks(seq, seq->computed + n)) {
      Sequence* victim = NewestUnscheduled(*plan);
      Preempt(victim);
      if (victim == seq) {
        fits = false;
        break;
      }
    }
    if (!fits) continue;
    plan->push_back({seq, n});
    *budget -= n;
  }
}

void Scheduler::AdmitWaiting(int64_t* budget, std::vector<Scheduled>* plan) {
  std::vector<Sequence*> candidates;
  for (auto& [order, seq] : waiting_) candidates.push_back(seq);
  for (Sequence* seq : candidates) {
    if (*budget == 0 || static_cast<int>(running_.size()) >= config_.max_running) return;
    if (free_slots_.empty()) return;
    // Siblings of an n > 1 request wait for sequence 0 to cache the prompt, then hit it.
    if (seq->index > 0 && config_.enable_prefix_caching && !seq->request->prompt_cached) continue;
    if (!Admit(seq, *budget, plan)) return;
    *budget -= plan->back().tokens;
  }
}

bool Scheduler::Admit(Sequence* seq, int64_t budget, std::vector<Scheduled>* plan) {
  seq->slot = free_slots_.back();
  free_slots_.pop_back();
  cache::PrefixMatch match;
  if (config_.enable_prefix_caching) {
    EnsureHashes(seq, seq->tokens.size() / layout_.block_size);
    match = cache_.Lookup(seq->hashes, static_cast<int64_t>(seq->tokens.size()) - 1,
                          info_.has_recurrent_state);
    cache_.Acquire(match);
  }
  seq->blocks.assign(match.blocks.begin(), match.blocks.end());
  seq->committed = match.blocks.size();
  seq->computed = match.tokens;
  const int64_t n = ChunkEnd(seq, std::min(seq->remaining(), budget));
  if (!EnsureBlocks(seq, seq->computed + n)) {
    ReleaseResources(seq);
    return false;
  }
  if (match.tokens > 0 && info_.has_recurrent_state) {
    runner_->CopyState(match.checkpoint_slot, seq->slot);
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
  plan->push_back({seq, n});
  return true;
}

// Cuts a chunk of n tokens starting at `computed` so it ends at the first checkpoint position
// inside it that still needs a checkpoint.
int64_t Scheduler::ChunkEnd(Sequence* seq, int64_t n) {
  if (!use_checkpoints_ || n <= 1) return n;
  const int64_t bs = layout_.block_size;
  for (int64_t p = (seq->computed / bs + 1) * bs; p < seq->computed + n; p += bs) {
    if (IsCheckpointTarget(*seq, p) && NeedsCheckpoint(seq, p)) return p - seq->computed;
  }
  return n;
}

bool Scheduler::IsCheckpointTarget(const Sequence& seq, int64_t position) const {
  if (!use_checkpoints_ || position <= 0 || position % layout_.block_size != 0) return false;
  const int64_t interval = config_.state_checkpoint_interval;
  if (interval > 0 && position % interval == 0) return true;
  return position == seq.prompt_len / layout_.block_size * layout_.block_size;
}

bool Scheduler::NeedsCheckpoint(Sequence* seq, int64_t position) {
  const size_t block = static_cast<size_t>(position / layout_.block_size) - 1;
  EnsureHashes(seq, block + 1);
  return !cache_.HasCheckpoint(seq->hashes.chain[block]);
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

Sequence* Scheduler::NewestUnscheduled(const std::vector<Scheduled>& plan) const {
  for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
    const bool scheduled = std::any_of(plan.begin(), plan.end(),
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

void Scheduler::EnsureHashes(Sequence* seq, size_t full_blocks) {
  const size_t bs = static_cast<size_t>(layout_.block_size);
  for (size_t b = seq->hashes.local.size(); b < full_blocks; ++b) {
    const cache::BlockHash local =
        cache::LocalBlockHash(std::span(seq->tokens).subspan(b * bs, bs));
    seq->hashes.local.push_back(local);
    seq->hashes.chain.push_back(b == 0 ? local
                                       : cache::ChainBlockHash(seq->hashes.chain.back(), local));
  }
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
