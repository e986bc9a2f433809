// The second half of a step: record what the forward pass computed, offer full blocks and state
// checkpoints to the prefix cache, sample, and finish sequences.
#include <algorithm>
#include <limits>

#include "base/check.h"
#include "base/log.h"
#include "engine/scheduler.h"

namespace k3::engine {

const char* FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone:
      return "none";
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
    case FinishReason::kError:
      return "error";
  }
  return "?";
}

void Scheduler::Update(const std::vector<Scheduled>& plan, const std::vector<float>& logits) {
  WaitForMasks();
  mask_queue_.clear();
  size_t row = 0;
  for (const Scheduled& s : plan) {
    Sequence* seq = s.seq;
    seq->computed += s.tokens;
    if (seq->computed <= seq->prompt_len) totals_.prefill_tokens += s.tokens;
    if (config_.enable_prefix_caching) {
      CommitFullBlocks(seq);
      MaybeCheckpoint(seq);
    }
    if (seq->computed == static_cast<int64_t>(seq->tokens.size())) {
      K3_CHECK((row + 1) * info_.vocab_size <= logits.size()) << "runner returned too few rows";
      if (seq->index == 0) seq->request->prompt_cached = true;
      AppendToken(seq, logits.data() + row * info_.vocab_size);
      ++row;
    }
  }
  PrefetchMasks();
}

void Scheduler::PrefetchMasks() {
  if (mask_queue_.empty()) return;
  mask_worker_.Run([this, queue = mask_queue_] {
    for (Sequence* seq : queue) {
      FillSequenceMask(seq);
      seq->mask_ready = true;
    }
  });
}

// Tokens this sequence may still generate (the next one included).
int64_t Scheduler::TokensLeft(const Sequence& seq) const {
  return std::min(seq.request->params.max_tokens - seq.generated,
                  layout_.max_model_len - static_cast<int64_t>(seq.tokens.size()));
}

void Scheduler::FillSequenceMask(Sequence* seq) const {
  if (!seq->request->params.grammar_ends_within_budget) {
    seq->matcher->FillMask(&seq->mask);
    seq->mask_closing = false;
    return;
  }
  const int64_t left = std::max<int64_t>(1, TokensLeft(*seq));
  seq->mask_closing = seq->matcher->FillBudgetedMask(&seq->mask, static_cast<size_t>(left));
}

// Masks disallowed tokens to -inf. A grammar never leaves no token allowed (the matcher keeps
// only prefixes that can be finished); if it ever did, EOS alone is left so the sequence ends.
void Scheduler::ConstrainRow(Sequence* seq) {
  if (!seq->mask_ready) FillSequenceMask(seq);
  seq->mask_ready = false;
  seq->closed_by_budget |= seq->mask_closing;
  MaskRow(seq->mask);
}

void Scheduler::MaskRow(const structured::TokenSet& mask) {
  const auto words = mask.words();
  bool any = false;
  for (size_t w = 0; w < words.size(); ++w) {
    const uint64_t bits = words[w];
    any |= bits != 0;
    if (bits == ~uint64_t{0}) continue;
    const size_t end = std::min(row_.size(), (w + 1) * 64);
    for (size_t t = w * 64; t < end; ++t) {
      if (!((bits >> (t - w * 64)) & 1)) row_[t] = -std::numeric_limits<float>::infinity();
    }
  }
  if (!any && info_.eos_token_id >= 0) {
    K3_LOG(kError) << "grammar allows no token; ending the sequence";
    row_[static_cast<size_t>(info_.eos_token_id)] = 0.0f;
  }
}

void Scheduler::CommitFullBlocks(Sequence* seq) {
  const size_t full = static_cast<size_t>(seq->computed / layout_.block_size);
  if (full <= seq->committed) return;
  EnsureHashes(seq, full);
  const size_t bs = static_cast<size_t>(layout_.block_size);
  for (size_t b = seq->committed; b < full; ++b) {
    cache_.Commit(seq->blocks[b], b ? seq->hashes.chain[b - 1] : 0, seq->hashes.local[b],
                  seq->hashes.chain[b], std::span(seq->tokens).subspan(b * bs, bs),
                  static_cast<int64_t>((b + 1) * bs));
  }
  seq->committed = full;
}

void Scheduler::MaybeCheckpoint(Sequence* seq) {
  if (!IsCheckpointTarget(*seq, seq->computed)) return;
  const size_t block = static_cast<size_t>(seq->computed / layout_.block_size) - 1;
  const cache::BlockHash chain = seq->hashes.chain[block];
  if (!cache_.IsCached(chain) || cache_.HasCheckpoint(chain)) return;
  const int slot = cache_.AllocateCheckpointSlot();
  if (slot < 0) return;
  runner_->CopyState(seq->slot, slot);
  cache_.AttachCheckpoint(chain, slot);
}

RequestOutput Scheduler::NewOutput(const Sequence& seq) const {
  RequestOutput out;
  out.request_id = seq.request->id;
  out.index = seq.index;
  out.prompt_tokens = seq.prompt_len;
  out.cached_tokens = seq.cached_tokens;
  out.generated_tokens = seq.generated;
  return out;
}

void Scheduler::AppendToken(Sequence* seq, const float* logits_row) {
  const SamplingParams& params = seq->request->params;
  row_.assign(logits_row, logits_row + info_.vocab_size);
  const bool forced = seq->generated < static_cast<int64_t>(params.forced_tokens.size());
  if (seq->matcher && !forced) ConstrainRow(seq);
  // Sibling completions draw from their own streams of the request's seed.
  const uint64_t seed =
      seq->request->seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(seq->index);
  SampledToken sampled =
      sampler_.Sample(row_, params, seq->penalties, seed, static_cast<uint64_t>(seq->generated));
  if (forced) sampled.token = params.forced_tokens[static_cast<size_t>(seq->generated)];
  // A token that would leave no room to finish the grammar within max_tokens: draw again (same
  // seed) among the tokens of the shortest way to finish. Checked only near the budget's end.
  if (seq->matcher && !forced && params.grammar_ends_within_budget &&
      !seq->matcher->FitsBudget(sampled.token,
                                static_cast<size_t>(std::max<int64_t>(1, TokensLeft(*seq))))) {
    seq->matcher->FillCompletionMask(&seq->mask);
    MaskRow(seq->mask);
    sampled =
        sampler_.Sample(row_, params, seq->penalties, seed, static_cast<uint64_t>(seq->generated));
    seq->closed_by_budget = true;
  }
  const int32_t token = sampled.token;
  // A scripted token outside the grammar ends the constraint for this sequence (tests only).
  if (seq->matcher && !seq->matcher->Accept(token)) seq->matcher.reset();
  const bool grammar_complete = seq->matcher && seq->matcher->Finished();
  seq->tokens.push_back(token);
  seq->penalties.AddOutput(token);
  ++seq->generated;
  ++totals_.generated_tokens;

  RequestOutput out = NewOutput(*seq);
  out.tokens.push_back(token);
  out.grammar_complete = grammar_complete;
  if (params.logprobs >= 0) out.logprobs.push_back(std::move(sampled));
  const bool stop_id = std::find(params.stop_token_ids.begin(), params.stop_token_ids.end(),
                                 token) != params.stop_token_ids.end();
  if (stop_id || (!params.ignore_eos && token == info_.eos_token_id)) {
    // An output the budget made end early is complete, but shaped by max_tokens: say so.
    const bool budget_shaped = grammar_complete && seq->closed_by_budget;
    Finish(seq, budget_shaped ? FinishReason::kLength : FinishReason::kStop, std::move(out));
  } else if (seq->generated >= params.max_tokens ||
             static_cast<int64_t>(seq->tokens.size()) >= layout_.max_model_len) {
    Finish(seq, FinishReason::kLength, std::move(out));
  } else {
    if (seq->matcher) mask_queue_.push_back(seq);
    Emit(seq, out);
  }
}

void Scheduler::Emit(Sequence* seq, RequestOutput& output) {
  if (seq->request->on_output) seq->request->on_output(output);
}

void Scheduler::Finish(Sequence* seq, FinishReason reason, RequestOutput output) {
  ReleaseResources(seq);
  (seq->state == SequenceState::kRunning ? running_ : waiting_).erase(seq->order);
  output.finish_reason = reason;
  output.generated_tokens = seq->generated;
  ++totals_.finished;
  RequestState* request = seq->request;
  if (seq->index == 0) request->prompt_cached = true;  // never leave siblings waiting on it
  std::erase(request->sequences, seq);
  Emit(seq, output);
  sequences_.erase(seq);
  if (--request->unfinished == 0) requests_.erase(request->id);
}

}  // namespace k3::engine
