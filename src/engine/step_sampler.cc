#include "engine/step_sampler.h"

#include <algorithm>
#include <limits>

#include "base/check.h"
#include "base/log.h"

namespace k3::engine {

void StepSampler::BeginStep(const StepPlan& plan) {
  for (uint64_t id : plan.finished_seq_ids) sequences_.erase(id);
  for (const NewSequence& s : plan.new_sequences) Register(plan, s);
  for (const ScheduledSequence& s : plan.sequences) CountOutputs(plan, s);
}

void StepSampler::Register(const StepPlan& plan, const NewSequence& s) {
  SequenceState state;
  state.params = s.params;
  state.params.grammar = nullptr;  // masks come with the plan
  state.seed = s.seed;
  state.prompt_len = s.prompt_len;
  const SamplingParams& p = state.params;
  // Counts matter only to penalties; without any, none are kept (and none allocate).
  state.counts_outputs =
      p.repetition_penalty != 1.0 || p.presence_penalty != 0.0 || p.frequency_penalty != 0.0;
  if (p.repetition_penalty != 1.0) {
    auto prompt =
        std::span(plan.prompt_ids)
            .subspan(static_cast<size_t>(s.prompt_offset), static_cast<size_t>(s.num_prompt_ids));
    std::vector<int32_t>& sorted = state.penalties.prompt_tokens;
    sorted.assign(prompt.begin(), prompt.end());
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  }
  const bool inserted = sequences_.insert_or_assign(s.seq_id, std::move(state)).second;
  K3_CHECK(inserted) << "sequence " << s.seq_id << " registered twice";
}

// Positions at or past prompt_len + outputs_seen hold output tokens not yet counted. A sequence
// recomputed after preemption schedules earlier positions again; those were counted already.
void StepSampler::CountOutputs(const StepPlan& plan, const ScheduledSequence& s) {
  auto it = sequences_.find(s.seq_id);
  K3_CHECK(it != sequences_.end()) << "sequence " << s.seq_id << " was never registered";
  SequenceState& state = it->second;
  if (!state.counts_outputs) return;
  const auto tokens = plan.tokens_of(s);
  for (size_t i = 0; i < tokens.size(); ++i) {
    const int64_t position = s.start_position + static_cast<int64_t>(i);
    const int64_t next_output = state.prompt_len + state.outputs_seen;
    if (position < next_output) continue;
    K3_CHECK(position == next_output) << "output tokens scheduled out of order";
    state.penalties.AddOutput(tokens[i]);
    ++state.outputs_seen;
  }
}

void StepSampler::MaskRow(std::span<const uint64_t> words) {
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
  if (!any && eos_ >= 0) {
    K3_LOG(kError) << "grammar allows no token; ending the sequence";
    row_[static_cast<size_t>(eos_)] = 0.0f;
  }
}

// The draws replay the scheduler's historical order exactly: penalties are applied to the row in
// place by the first draw, and a fallback draw (budget) masks and draws again on that same row.
void StepSampler::Draw(const StepPlan& plan, const ScheduledSequence& s, const float* logits_row,
                       SequenceResult* out) {
  SequenceState& state = sequences_.at(s.seq_id);
  const SamplingParams& params = state.params;
  row_.assign(logits_row, logits_row + vocab_);
  const bool forced = s.forced_token >= 0;
  if (s.mask_row >= 0 && !forced) MaskRow(plan.masks.row(s.mask_row));
  const auto step = static_cast<uint64_t>(s.sample_step);
  out->sampled = true;
  out->token = sampler_.Sample(row_, params, state.penalties, state.seed, step);
  if (forced) out->token.token = s.forced_token;
  out->has_fallback = s.fallback_mask_row >= 0 && !forced &&
                      plan.masks.active[static_cast<size_t>(s.fallback_mask_row)];
  if (out->has_fallback) {
    MaskRow(plan.masks.row(s.fallback_mask_row));
    out->fallback = sampler_.Sample(row_, params, state.penalties, state.seed, step);
  }
}

}  // namespace k3::engine
