// Writing the StepPlan from the sequences Schedule chose, and the plan's grammar masks (computed
// on the mask worker while the executor runs the forward pass).
#include <algorithm>
#include <cstring>

#include "base/check.h"
#include "engine/scheduler.h"

namespace k3::engine {

void StepPlan::Clear() {
  sequences.clear();
  token_ids.clear();
  block_ids.clear();
  new_sequences.clear();
  prompt_ids.clear();
  finished_seq_ids.clear();
  copies_before.clear();
  copies_after.clear();
  masks.words.clear();
  masks.active.clear();
  num_tokens = 0;
}

void Scheduler::WritePlan() {
  mask_jobs_.clear();
  for (const Scheduled& s : scheduled_) WriteSequence(s);
  if (plan_.empty()) return;
  // Sequences that finished since the last plan: the executor forgets them first.
  plan_.finished_seq_ids.swap(finished_ids_);
  finished_ids_.clear();
  StartMasks();
}

void Scheduler::WriteSequence(const Scheduled& s) {
  Sequence* seq = s.seq;
  if (!seq->registered) Register(seq);
  ScheduledSequence row;
  row.seq_id = seq->id;
  row.state_slot = seq->slot;
  row.start_position = seq->computed;
  row.token_offset = static_cast<int32_t>(plan_.token_ids.size());
  row.num_tokens = static_cast<int32_t>(s.tokens);
  const auto new_tokens =
      std::span(seq->tokens)
          .subspan(static_cast<size_t>(seq->computed), static_cast<size_t>(s.tokens));
  plan_.token_ids.insert(plan_.token_ids.end(), new_tokens.begin(), new_tokens.end());
  row.block_offset = static_cast<int32_t>(plan_.block_ids.size());
  row.num_blocks = static_cast<int32_t>(seq->blocks.size());
  plan_.block_ids.insert(plan_.block_ids.end(), seq->blocks.begin(), seq->blocks.end());
  const int64_t end = seq->computed + s.tokens;
  // Only a chunk that reaches the last known token needs logits (to sample the next one).
  row.sample = end == static_cast<int64_t>(seq->tokens.size());
  row.num_logit_rows = row.sample ? 1 : 0;
  if (row.sample) WriteSampling(seq, &row);
  // A checkpoint position at the chunk's end: save the state there after the forward pass.
  seq->pending_checkpoint = cache_.ReserveCheckpoint(seq->view(), end);
  if (seq->pending_checkpoint >= 0) {
    plan_.copies_after.push_back({seq->slot, seq->pending_checkpoint});
  }
  plan_.num_tokens += s.tokens;
  plan_.sequences.push_back(row);
}

void Scheduler::Register(Sequence* seq) {
  const RequestState& request = *seq->request;
  NewSequence entry;
  entry.seq_id = seq->id;
  entry.params = request.params;
  entry.params.grammar = nullptr;
  entry.params.forced_tokens.clear();  // the plan names each forced token
  // Sibling completions draw from their own streams of the request's seed.
  entry.seed = request.seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(seq->index);
  entry.prompt_len = seq->prompt_len;
  if (request.params.repetition_penalty != 1.0) {
    entry.prompt_offset = static_cast<int32_t>(plan_.prompt_ids.size());
    entry.num_prompt_ids = static_cast<int32_t>(request.prompt.size());
    plan_.prompt_ids.insert(plan_.prompt_ids.end(), request.prompt.begin(), request.prompt.end());
  }
  plan_.new_sequences.push_back(std::move(entry));
  seq->registered = true;
}

void Scheduler::WriteSampling(Sequence* seq, ScheduledSequence* row) {
  const SamplingParams& params = seq->request->params;
  row->sample_step = seq->generated;
  if (seq->generated < static_cast<int64_t>(params.forced_tokens.size())) {
    row->forced_token = params.forced_tokens[static_cast<size_t>(seq->generated)];
    return;  // a scripted token bypasses the grammar
  }
  if (!seq->matcher) return;
  const int32_t rows = static_cast<int32_t>(plan_.masks.active.size());
  row->mask_row = rows;
  row->fallback_mask_row = params.grammar_ends_within_budget ? rows + 1 : -1;
  plan_.masks.active.resize(static_cast<size_t>(row->fallback_mask_row >= 0 ? rows + 2 : rows + 1),
                            0);
  mask_jobs_.push_back({seq, row->mask_row, row->fallback_mask_row});
}

// Tokens this sequence may still generate (the next one included).
int64_t Scheduler::TokensLeft(const Sequence& seq) const {
  return std::min(seq.request->params.max_tokens - seq.generated,
                  layout_.max_model_len - static_cast<int64_t>(seq.tokens.size()));
}

void Scheduler::StartMasks() {
  if (mask_jobs_.empty()) return;
  MaskRows& masks = plan_.masks;
  masks.words_per_row = (info_.vocab_size + 63) / 64;
  masks.words.resize(masks.active.size() * static_cast<size_t>(masks.words_per_row));
  mask_worker_.Run([this] {
    for (const MaskJob& job : mask_jobs_) FillRowMasks(job.seq, job.mask_row, job.fallback_row);
  });
}

// The mask of the next token (budget-aware unless the request opted out) and, when a budget check
// may reject the draw, the completion mask it is redrawn from. Runs on the mask worker.
void Scheduler::FillRowMasks(Sequence* seq, int32_t mask_row, int32_t fallback_row) {
  MaskRows& masks = plan_.masks;
  auto copy_row = [&](const structured::TokenSet& set, int32_t row) {
    const auto words = set.words();
    K3_CHECK(static_cast<int64_t>(words.size()) == masks.words_per_row) << "mask width";
    std::memcpy(&masks.words[static_cast<size_t>(row * masks.words_per_row)], words.data(),
                words.size() * sizeof(uint64_t));
    masks.active[static_cast<size_t>(row)] = 1;
  };
  const size_t left = static_cast<size_t>(std::max<int64_t>(1, TokensLeft(*seq)));
  if (!seq->request->params.grammar_ends_within_budget) {
    seq->matcher->FillMask(&seq->mask);
    seq->mask_closing = false;
  } else {
    seq->mask_closing = seq->matcher->FillBudgetedMask(&seq->mask, left);
  }
  copy_row(seq->mask, mask_row);
  if (fallback_row < 0 || !seq->matcher->BudgetCheckNeeded(left)) return;
  seq->matcher->FillCompletionMask(&seq->fallback_mask);
  copy_row(seq->fallback_mask, fallback_row);
}

void Scheduler::CompleteMasks() { WaitForMasks(); }

}  // namespace k3::engine
